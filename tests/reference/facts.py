"""What is known about a run once the session key has had its say (semantics 7.4-7.7, 7.10).

Session keys, as OpenClaw writes them: `agent:<agent>:<rest>` where `<rest>` is `main` (or the
configured main key), `<channel>:group:<group>`, `<channel>:<account>:group:<group>`,
`<channel>:dm:<peer>`, `<channel>:<account>:dm:<peer>` (`direct` for `dm` alike), or
`subagent:<id>[:subagent:<id>...]`. A bare key is `<rest>` alone. Only the group and DM shapes
name a channel (`cron:<job>` or `dm:<peer>` do not).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from policyctl import RunContext, Sender


@dataclass(frozen=True)
class KeyFacts:
    agent: str | None
    rest: str
    channel: str | None
    account: str | None
    group: str | None


def read_key(key: str) -> KeyFacts:
    parts = key.split(":")
    agent = None
    if len(parts) >= 3 and parts[0] == "agent":
        agent, parts = parts[1], parts[2:]
    rest = ":".join(parts)
    channel = account = group = None
    if parts and parts[0] not in ("main", "subagent"):
        # the first of parts 1-2 that says what the session is, with something after it
        at = next((i for i in (1, 2) if i < len(parts) - 1 and parts[i] in _KINDS), None)
        if at is not None:
            channel = parts[0]
            account = parts[1] if at == 2 else None
            if parts[at] == "group":
                group = ":".join(parts[at + 1 :]) or None
    return KeyFacts(agent, rest, channel, account, group)


_KINDS = ("group", "dm", "direct")


@dataclass(frozen=True)
class Facts:
    agent: str | None
    provider: str | None
    model: str | None
    channel: str | None
    account: str | None
    group: str | None
    sender: Sender
    is_owner: bool
    session_key: str | None
    is_subagent: bool
    depth: int
    sandboxed: bool
    trigger: str


def _sandbox_mode(doc: dict[str, Any], agent: str | None) -> str:
    agents = doc.get("agents") or {}
    entry = (agents.get("entries") or {}).get(agent) if agent else None
    mode = ((entry or {}).get("sandbox") or {}).get("mode")
    if mode is None:
        mode = ((agents.get("defaults") or {}).get("sandbox") or {}).get("mode")
    return str(mode or "off")


def _is_main_session(
    doc: dict[str, Any], agent: str | None, key: str | None, group: str | None, spawned: bool
) -> bool:
    if group is not None or spawned:
        return False  # a group's run or a subagent's is never the main session
    if key is None:
        return True
    session = doc.get("session") or {}
    main_key = "global" if session.get("scope") == "global" else session.get("mainKey") or "main"
    names = {"main", main_key}
    if agent is not None:
        names |= {f"agent:{agent}:{main_key}", f"agent:{agent}:main"}
    return key in names


def _subagents_in(facts: KeyFacts | None) -> int:
    if facts is None or not facts.rest.startswith("subagent:"):
        return 0
    return facts.rest.split(":").count("subagent")


def facts_of(doc: dict[str, Any], ctx: RunContext, quirks: frozenset[str] = frozenset()) -> Facts:
    key = ctx.session_key
    own = read_key(key) if key is not None else None
    spawner = read_key(ctx.spawned_by) if ctx.spawned_by else None
    agent = (own.agent if own and own.agent else None) or ctx.agent
    # How deep (7.10): the key's count of subagent parts at least, a caller may only claim a
    # deeper run; a run spawned by a subagent is one deeper than it; and anything that says
    # the run was spawned (a spawning session, a parent's tools outside cron, the spawn
    # trigger) makes it a subagent at depth 1 at least: the reading with more layers.
    depth = max(_subagents_in(own), ctx.subagent_depth or 0)
    if _subagents_in(spawner):
        depth = max(depth, _subagents_in(spawner) + 1)
    if (
        ctx.spawned_by
        or ctx.trigger == "spawn"
        or (ctx.parent is not None and ctx.trigger != "cron")
    ):
        depth = max(depth, 1)
    is_subagent = depth > 0
    # Channel and group come from the session key, or from the spawning session's key for a
    # spawned run (or for any run whose own key names no group while the spawner's does). A
    # key decides which group, but where it names none, a group the caller names applies
    # (it only adds a layer); a key that names no channel or account leaves the caller's.
    origin = own
    if spawner is not None and (
        own is None
        or own.rest.startswith("subagent:")
        or (own.group is None and spawner.group is not None)
    ):
        origin = spawner
    if origin is None:
        channel, account, group = ctx.channel, ctx.account, ctx.group
    else:
        channel, group = origin.channel or ctx.channel, origin.group or ctx.group
        account = origin.account or ctx.account
    mode = _sandbox_mode(doc, agent)
    main = _is_main_session(doc, agent, key, group, is_subagent)
    sandboxed = mode == "all" or (mode == "non-main" and not main)
    return Facts(
        agent=agent,
        provider=ctx.provider,
        model=ctx.model,
        channel=channel,
        account=account,
        group=group,
        sender=ctx.sender,
        is_owner=ctx.is_owner,
        session_key=key,
        is_subagent=is_subagent,
        depth=depth,
        sandboxed=sandboxed,
        trigger=ctx.trigger,
    )
