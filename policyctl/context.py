"""Context: what is known about one run, and what can be derived from its session keys.

`RunContext` is what a caller supplies. `SessionInfo` is what a session key says (agent,
channel, account, group, subagent depth); the resolver trusts the session key over any
caller-supplied agent, channel, group or subagent depth (semantics 7.10), so a caller cannot
pick a looser policy; `pipeline.context` applies that rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from .callrules.model import LayerCallRules

Trigger = Literal["user", "cron", "memory", "skill", "spawn", "gateway"]
TRIGGERS: tuple[str, ...] = ("user", "cron", "memory", "skill", "spawn", "gateway")


@dataclass(frozen=True, slots=True)
class Sender:
    id: str | None = None
    e164: str | None = None
    username: str | None = None
    name: str | None = None

    @property
    def empty(self) -> bool:
        return not (self.id or self.e164 or self.username or self.name)


@dataclass(frozen=True, slots=True)
class Capture:
    """What a run hands down: the allow list a child (or a cron job) may not exceed.

    `allow=None` means no cap; `allow=()` means no tools at all (a cron job's `toolsAllow: []`).
    `deny` is carried along every generation. `calls` are the parent's call rules (every layer
    of the parent that had some, its own inheritance included): the child applies them as its
    inheritance layer, so a child never makes a call its parent could not. They are left out
    of equality and the hash: they do not change which tools a run has, and `Resolution` reads
    them from the caller's context, never from a cached one.
    """

    allow: tuple[str, ...] | None = None
    deny: tuple[str, ...] = ()
    source: str = "parent run"
    calls: tuple[LayerCallRules, ...] = field(default=(), compare=False)
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __hash__(self) -> int:
        # used as a cache key on every resolve: hash the (possibly long) lists once
        if not self._hash:
            object.__setattr__(self, "_hash", hash((self.allow, self.deny, self.source)) or 1)
        return self._hash


@dataclass(frozen=True, slots=True)
class RunContext:
    agent: str | None = None
    provider: str | None = None
    model: str | None = None
    channel: str | None = None
    account: str | None = None
    group: str | None = None
    sender: Sender = field(default_factory=Sender)
    is_owner: bool = False
    session_key: str | None = None
    spawned_by: str | None = None
    subagent_depth: int | None = None
    parent: Capture | None = None
    trigger: Trigger = "user"
    #: the run's workspace and home directories, for path call rules (`./src/**`, `~/.ssh`).
    #: Out of equality and the hash: they never change the allowed tools, so runs in
    #: different workspaces share one name-level answer; `Resolution` reads them from the
    #: caller's context.
    workspace: str | None = field(default=None, compare=False)
    home: str | None = field(default=None, compare=False)
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __hash__(self) -> int:
        # used as a cache key on every resolve: hashed once per context object
        if not self._hash:
            object.__setattr__(self, "_hash", hash(_compared(self)) or 1)
        return self._hash


#: the fields that make two contexts different runs, read from the class (never listed by
#: hand: a field added and forgotten in a key would let two different runs share an answer)
COMPARED_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(RunContext) if f.compare)
_compared = attrgetter(*COMPARED_FIELDS)


@dataclass(frozen=True, slots=True)
class SessionInfo:
    agent: str | None = None
    channel: str | None = None
    account: str | None = None
    group: str | None = None
    subagent_depth: int = 0
    is_subagent: bool = False


_GROUP_KINDS = ("group", "channel")
#: a direct-message session: it names the channel (and account) but no group
_DM_KINDS = ("dm", "direct")


def parse_session_key(key: str | None) -> SessionInfo:
    """Read OpenClaw-style session keys.

    `agent:<id>:<rest>` where rest is the main key (`main`), `<channel>:group:<id>`,
    `<channel>:<account>:group:<id>`, `<channel>:channel:<id>`, `<channel>:dm:<peer>`,
    `<channel>:<account>:dm:<peer>` (`direct` for `dm` alike), `subagent:<uuid>` (nested:
    `subagent:<a>:subagent:<b>`) or `cron:<job>`. A group or DM key names its channel (and
    account) whatever the caller says: the key is the authority (semantics 7.10).
    """
    if not key:
        return SessionInfo()
    text = key.strip()
    agent = None
    rest = text
    parts = text.split(":")
    if len(parts) >= 2 and parts[0].lower() == "agent":
        # `agent:<id>` with no rest still names the agent (else `--agent` would decide)
        agent = parts[1].strip().lower() or None
        rest = ":".join(parts[2:])
    segments = rest.split(":")
    lowered = rest.lower().split(":")
    depth = lowered.count("subagent")
    is_subagent = lowered[0] == "subagent"
    channel = account = group = None
    if not is_subagent and len(segments) >= 3:
        for i in (1, 2):
            kind = segments[i].lower() if i < len(segments) - 1 else ""
            if kind in _GROUP_KINDS or kind in _DM_KINDS:
                channel = segments[0].strip().lower() or None
                account = segments[1] if i == 2 else None
                if kind in _GROUP_KINDS:
                    group = ":".join(segments[i + 1 :]) or None
                break
    return SessionInfo(agent, channel, account, group, depth, is_subagent)


def group_candidates(group_id: str) -> tuple[str, ...]:
    """The id itself, then the thread-less and sender-less forms (semantics 7.4)."""
    out = [group_id]
    topic = group_id.find(":topic:")
    sender = group_id.find(":sender:")
    if topic >= 0:
        base = group_id[:topic]
        after = group_id[topic + len(":topic:") :]
        sender_in_topic = after.find(":sender:")
        if sender_in_topic >= 0:
            out.append(group_id[: topic + len(":topic:") + sender_in_topic])
        out.append(base)
    elif sender >= 0:
        out.append(group_id[:sender])
    seen: list[str] = []
    for c in out:
        if c and c not in seen:
            seen.append(c)
    return tuple(seen)
