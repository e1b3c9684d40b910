"""Context derivation: a `RunContext` -> the facts every layer is selected by.

The session key is the authority (semantics 7.10): the agent, the channel, account and group,
whether the run is a subagent and how deep all come from it (for a spawned subagent, the
channel and group come from the spawning session's key). A caller-supplied field that
disagrees is ignored with a diagnostic (PC384, PC406), so a caller cannot pick a looser
policy. A field that only adds to what the key says (a group where the key names none, a
spawning session or parent tools on a run whose key is not a subagent's) is taken, with
PC440: it only adds layers, and every layer narrows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..compile.compiled import CompiledPolicy
from ..context import Capture, RunContext, Sender, SessionInfo, parse_session_key
from ..diagnostics import Diagnostic
from ..names import clean, fold, sender_value

NO_SENDER = Sender()


@dataclass(frozen=True, slots=True)
class Facts:
    """What selects the layers of a run, sender aside. Equal facts select equal layers, so
    `Facts` is the key under which a run's layer plan is shared (thousands of subagent session
    keys share one)."""

    agent: str | None
    provider: str | None
    model: str | None
    channel: str | None
    account: str | None
    group: str | None
    is_owner: bool
    subagent_depth: int
    role: str
    sandbox_mode: str
    sandboxed: bool
    #: why the run is (not) sandboxed, for the trail
    session: str
    trigger: str
    parent: Capture | None


@dataclass(frozen=True, slots=True)
class EffectiveContext:
    """The run as the resolver sees it, after session keys have been read and trusted."""

    agent: str | None
    provider: str | None
    model: str | None
    channel: str | None
    account: str | None
    group: str | None
    sender: Sender
    is_owner: bool
    session_key: str | None
    spawned_by: str | None
    subagent_depth: int
    role: str
    sandbox_mode: str
    sandboxed: bool
    trigger: str

    @staticmethod
    def of(facts: Facts, ctx: RunContext, sender: Sender) -> EffectiveContext:
        return EffectiveContext(
            facts.agent,
            facts.provider,
            facts.model,
            facts.channel,
            facts.account,
            facts.group,
            sender,
            facts.is_owner,
            ctx.session_key,
            ctx.spawned_by,
            facts.subagent_depth,
            facts.role,
            facts.sandbox_mode,
            facts.sandboxed,
            facts.trigger,
        )

    def to_json(self) -> dict[str, object]:
        return {
            "agent": self.agent,
            "provider": self.provider,
            "model": self.model,
            "channel": self.channel,
            "account": self.account,
            "group": self.group,
            "sender": {
                "id": self.sender.id,
                "e164": self.sender.e164,
                "username": self.sender.username,
                "name": self.sender.name,
            },
            "owner": self.is_owner,
            "sessionKey": self.session_key,
            "spawnedBy": self.spawned_by,
            "subagentDepth": self.subagent_depth,
            "role": self.role,
            "sandboxMode": self.sandbox_mode,
            "sandboxed": self.sandboxed,
            "trigger": self.trigger,
        }


def _ignored(field: str, given: object, says: object) -> Diagnostic:
    return Diagnostic.make(
        "PC384",
        f"{field} {given!r} ignored: the session key says {says!r}",
        fix=f"drop {field} or pass the session key of the run you mean",
    )


def _narrower(reading: str, why: str, fix: str) -> Diagnostic:
    return Diagnostic.make("PC440", f"{reading}: {why}; the narrower reading was taken", fix=fix)


def _spawn_signs(ctx: RunContext) -> list[str]:
    """What says the run was spawned by another run: a spawning session, the tools a parent
    handed down (a cron job's `toolsAllow` is handed down too, but to a scheduled run), or
    the spawn trigger."""
    signs = []
    if ctx.spawned_by:
        signs.append(f"it names the spawning session {ctx.spawned_by!r}")
    if ctx.parent is not None and ctx.trigger != "cron":
        signs.append("it carries the tools a parent run handed down")
    if ctx.trigger == "spawn":
        signs.append("its trigger is spawn")
    return signs


def derive(
    policy: CompiledPolicy,
    ctx: RunContext,
    parse: Callable[[str], SessionInfo] = parse_session_key,
) -> tuple[Facts, tuple[Diagnostic, ...]]:
    """The run's facts, and a diagnostic for every caller field the session key overrode.

    Where two fields disagree and neither is the session key's word against a caller's, the
    run gets the reading that applies more layers (a group's policy, the subagent layer, the
    sandbox): every layer only narrows, so that reading can only hold fewer tools (PC440).

    `parse` reads the spawning session's key (the engine passes a memoised
    `parse_session_key`: the spawning session of a thousand subagents is one key, while a
    run's own key is new with every subagent)."""
    notes: list[Diagnostic] = []
    own = parse_session_key(ctx.session_key) if ctx.session_key else None
    spawner = parse(ctx.spawned_by) if ctx.spawned_by else None
    spawner_depth = spawner.subagent_depth if spawner is not None else 0
    # where the channel and group come from: the spawning session's key, else the own key
    origin: SessionInfo | None = spawner if spawner is not None else own
    # A spawning session speaks for a run's channel and group when the run's own key says
    # it was spawned (or there is no own key). On any other key it may only add a group the
    # key does not name (narrower); a group other than the key's is the key's call.
    if spawner is not None and own is not None and not own.is_subagent:
        if (spawner.channel, spawner.group) != (own.channel, own.group):
            if own.group is None and spawner.group is not None:
                notes.append(
                    _narrower(
                        f"read as a run spawned by the group session {ctx.spawned_by!r}",
                        f"the session key {ctx.session_key!r} names no group, while the "
                        "spawning session does (its group policy applies)",
                        "pass the run's own subagent key, or drop spawnedBy",
                    )
                )
            else:
                notes.append(_ignored("spawnedBy", ctx.spawned_by, ctx.session_key))
                origin = own
        else:
            origin = own

    agent = clean(ctx.agent)
    keyed_agent = own.agent if own else None
    if keyed_agent is None and spawner is not None and (own is None or own.is_subagent):
        # a spawned run belongs to its spawner's agent unless its own key names one; a run
        # whose key is no subagent's keeps the agent its key implies (that is no narrowing)
        keyed_agent = spawner.agent
    if keyed_agent is not None:
        if agent is not None and agent != keyed_agent:
            notes.append(_ignored("agent", agent, keyed_agent))
        agent = keyed_agent

    channel, account, group = clean(ctx.channel), clean(ctx.account, False), clean(ctx.group, False)
    keyed = origin
    if keyed is not None:
        if keyed.channel is not None and channel is not None and channel != keyed.channel:
            notes.append(
                Diagnostic.make(
                    "PC406", f'channel "{channel}" ignored: the session key says "{keyed.channel}"'
                )
            )
        if group is not None and keyed.group is None:
            # the key names no group (a main, DM or subagent key): the group only adds its
            # policy and makes the run a group session. A scheduled run's key (`cron:<job>`)
            # never names one: its job's group is no disagreement.
            if ctx.trigger != "cron":
                notes.append(
                    _narrower(
                        f'group "{group}" applied',
                        "the session key names no group, and a run in a group gets the group's "
                        "policy (and is sandboxed under non-main)",
                        "pass the group session's key, or drop the group",
                    )
                )
            channel = keyed.channel or channel
        else:
            if group is not None and group != keyed.group:
                notes.append(
                    Diagnostic.make(
                        "PC406",
                        f'group "{group}" ignored: the session key says {keyed.group!r}',
                    )
                )
            group = keyed.group
            channel = keyed.channel or (channel if keyed.group is None else None)
        account = keyed.account or account

    # The key says whether the run is a subagent and how deep at least; a flat key
    # (`agent:a:subagent:<uuid>` at any depth) cannot say more, so a deeper given depth
    # stands (it only narrows), while a shallower one is ignored (it would widen). A run
    # spawned by a subagent is one level deeper than its spawner.
    depth = max(ctx.subagent_depth or 0, 0)
    keyed_depth = max(
        own.subagent_depth if own is not None else 0, spawner_depth + 1 if spawner_depth else 0
    )
    if depth < keyed_depth:
        own_depth = own.subagent_depth if own is not None else 0
        if ctx.subagent_depth is None and own_depth < keyed_depth:
            notes.append(
                _narrower(
                    f"read as a subagent at depth {keyed_depth}",
                    f"the spawning session {ctx.spawned_by!r} is a depth-{spawner_depth} "
                    f"subagent, while the session key says depth {own_depth}",
                    "pass the subagent's full key (agent:<id>:subagent:<a>:subagent:<b>) or "
                    "its subagentDepth",
                )
            )
        if ctx.subagent_depth is not None:
            says = (
                keyed_depth
                if own is None or own.subagent_depth >= keyed_depth
                else (f"{keyed_depth} (spawned by a depth-{spawner_depth} subagent)")
            )
            notes.append(_ignored("subagentDepth", ctx.subagent_depth, says))
        depth = keyed_depth
    signs = _spawn_signs(ctx) if depth == 0 and (ctx.spawned_by or ctx.parent) else ()
    if depth == 0 and (signs or ctx.trigger == "spawn"):
        signs = signs or _spawn_signs(ctx)
        if ctx.subagent_depth == 0:
            given = "subagentDepth 0 says it is none"
        elif own is not None:
            given = f"the session key {ctx.session_key!r} is no subagent's"
        else:
            given = "no session key or depth says it is one"
        notes.append(
            _narrower(
                "read as a subagent run (depth 1)",
                f"{' and '.join(signs)}, while {given}",
                "pass the subagent's session key (agent:<id>:subagent:<uuid>)",
            )
        )
        depth = 1
    max_depth = policy.max_spawn_depth
    role = "main" if depth == 0 else ("orchestrator" if depth < max_depth else "leaf")

    agent_policy = policy.agents.get(agent) if agent else None
    mode = (
        agent_policy.sandbox_mode
        if agent_policy and agent_policy.sandbox_mode
        else policy.default_sandbox_mode
    )
    session = _session_kind(policy, agent, ctx.session_key, group, own, depth)
    sandboxed = mode == "all" or (mode == "non-main" and session != "main session")
    provider = policy.catalog.canonical_provider(clean(ctx.provider) or "") or None
    facts = Facts(
        agent,
        provider,
        clean(ctx.model),
        channel,
        account,
        group,
        ctx.is_owner,
        depth,
        role,
        mode,
        sandboxed,
        session,
        ctx.trigger,
        ctx.parent,
    )
    return facts, tuple(notes)


def _session_kind(
    policy: CompiledPolicy,
    agent: str | None,
    key: str | None,
    group: str | None,
    own: SessionInfo | None,
    depth: int,
) -> str:
    """ "main session", "non-main session", or "group session" (semantics 7.6).

    A run in a group is a group session (groups have their own keys, never the main one),
    and a subagent run is not the main session, whatever key the caller passed with them. A
    key that parses as a group, channel, direct-message or subagent session (`own`) is
    never the main one, whatever `session.mainKey` says (PC362 refuses such a mainKey)."""
    if own is not None and (own.channel is not None or own.subagent_depth or own.is_subagent):
        return "non-main session"
    if group is not None:
        return "group session"
    if depth > 0:
        return "non-main session"
    if key is None:
        return "main session"
    main = "global" if policy.session_scope == "global" else policy.main_key
    text = fold(key)
    if text == "main" or text == main:
        return "main session"
    if agent and text.startswith("agent:"):
        prefix = f"agent:{agent}:"
        if text.startswith(prefix) and text[len(prefix) :] in ("main", main):
            return "main session"
    return "non-main session"


def effective_context(policy: CompiledPolicy, ctx: RunContext, sender: Sender) -> EffectiveContext:
    facts, _ = derive(policy, ctx)
    return EffectiveContext.of(facts, ctx, sender)


def normalise_sender(sender: Sender) -> Sender:
    """A run's sender identity in the normal form its keys are matched in."""
    if sender.empty:
        return NO_SENDER
    return Sender(
        clean(sender.id),
        clean(sender.e164),
        sender_value("username", sender.username or "") or None,
        clean(sender.name),
    )


def sender_candidates(channel: str | None, s: Sender) -> tuple[str, ...]:
    """The keys a (normalised) sender may match, most specific first (semantics 7.5)."""
    out = []
    if s.id and channel:
        out.append(f"channel:{channel}:{s.id}")
    if s.id:
        out.append(f"id:{s.id}")
    if s.e164:
        out.append(f"e164:{s.e164}")
    if s.username:
        out.append(f"username:{s.username}")
    if s.name:
        out.append(f"name:{s.name}")
    out.append("*")
    return tuple(out)


__all__ = [
    "NO_SENDER",
    "EffectiveContext",
    "Facts",
    "derive",
    "effective_context",
    "normalise_sender",
    "sender_candidates",
]
