"""Layers: which policy each of the eleven layers applies for one run (or why it is skipped).

This is the only place that knows the selection rules of semantics section 7: profile and
provider-profile assembly, byProvider key candidates, agent fallback, group candidates and
precedence, sender key order, sandbox mode and main-session aliases, subagent roles, and the
parent capture. Each rule is a dictionary lookup; policies assembled from several scopes are
memoised on the compiled policy, so a context shape seen before costs nothing to assemble.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .compile import (
    CompiledPolicy,
    GroupPolicy,
    LayerPolicy,
    ProviderScope,
    SenderTable,
    ToolsScope,
    catalog_entries,
    profile_entries,
)
from .context import RunContext, Sender, SessionInfo, group_candidates, parse_session_key
from .diagnostics import Diagnostic, Source
from .entries import Entry, EntryList, build_list

LAYER_NAMES: tuple[str, ...] = (
    "profile",
    "provider profile",
    "global",
    "global by provider",
    "agent",
    "agent by provider",
    "group",
    "sender",
    "sandbox",
    "subagent",
    "inheritance",
)
BASE_LABELS: tuple[str, ...] = (
    "tools.profile",
    "tools.byProvider.profile",
    "tools.allow",
    "tools.byProvider.allow",
    "agents.<id>.tools.allow",
    "agents.<id>.tools.byProvider.allow",
    "group tools.allow",
    "tools.toolsBySender",
    "sandbox tools.allow",
    "subagent tools.allow",
    "inherited tools",
)
NOTHING = "(none)"  # an entry no tool can match (not ASCII-valid as a name): "no tools at all"


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


@dataclass(frozen=True, slots=True)
class LayerPlan:
    stage: int
    policy: LayerPolicy | None
    skip_reason: str | None
    label: str


def _clean(value: str | None, lower: bool = True) -> str | None:
    if value is None:
        return None
    text = value.strip()
    return (text.lower() if lower else text) or None


def _base_context(
    policy: CompiledPolicy, ctx: RunContext
) -> tuple[EffectiveContext, list[Diagnostic]]:
    notes: list[Diagnostic] = []
    own = parse_session_key(ctx.session_key)
    spawner = parse_session_key(ctx.spawned_by) if ctx.spawned_by else None
    agent = _clean(ctx.agent) or own.agent or (spawner.agent if spawner else None)
    keyed: SessionInfo | None = (
        spawner if spawner is not None else (own if ctx.session_key else None)
    )
    channel, account, group = (
        _clean(ctx.channel),
        _clean(ctx.account, False),
        _clean(ctx.group, False),
    )
    if keyed is not None:
        if group is not None and group != keyed.group:
            notes.append(
                Diagnostic.make(
                    "PC406",
                    f'group "{group}" ignored: the session key says '
                    f"{(keyed.group and repr(keyed.group)) or 'no group'}",
                )
            )
        if keyed.channel is not None and channel is not None and channel != keyed.channel:
            notes.append(
                Diagnostic.make(
                    "PC406", f'channel "{channel}" ignored: the session key says "{keyed.channel}"'
                )
            )
        group = keyed.group
        channel = keyed.channel or (channel if keyed.group is None else None)
        account = keyed.account or account
    depth = ctx.subagent_depth if ctx.subagent_depth is not None else own.subagent_depth
    depth = max(depth, 0)
    role = "main" if depth == 0 else ("orchestrator" if depth < policy.max_spawn_depth else "leaf")
    agent_policy = policy.agents.get(agent) if agent else None
    mode = (
        agent_policy.sandbox_mode
        if agent_policy and agent_policy.sandbox_mode
        else policy.default_sandbox_mode
    )
    sandboxed = mode == "all" or (
        mode == "non-main"
        and ctx.session_key is not None
        and not _is_main_session(policy, agent, ctx.session_key)
    )
    sender = _NO_SENDER
    provider = policy.catalog.canonical_provider(ctx.provider) if ctx.provider else None
    return EffectiveContext(
        agent,
        provider,
        _clean(ctx.model),
        channel,
        account,
        group,
        sender,
        ctx.is_owner,
        ctx.session_key,
        ctx.spawned_by,
        depth,
        role,
        mode,
        sandboxed,
        ctx.trigger,
    ), notes


_NO_SENDER = Sender()


def normalise_sender(sender: Sender) -> Sender:
    if sender.empty:
        return _NO_SENDER
    return Sender(
        _clean(sender.id),
        _clean(sender.e164),
        (_clean(sender.username) or "").removeprefix("@") or None,
        _clean(sender.name),
    )


def effective_context(
    policy: CompiledPolicy, ctx: RunContext
) -> tuple[EffectiveContext, list[Diagnostic]]:
    base, notes = _base_context(policy, ctx)
    return replace(base, sender=normalise_sender(ctx.sender)), notes


def _is_main_session(policy: CompiledPolicy, agent: str | None, key: str) -> bool:
    main = "global" if policy.session_scope == "global" else policy.main_key
    aliases = {"main", main}
    if agent:
        aliases |= {f"agent:{agent}:{main}", f"agent:{agent}:main"}
    return key.strip().lower() in aliases


@dataclass(frozen=True, slots=True)
class Shape:
    """Everything about a run's layers that does not depend on who the sender is.

    Layers 7 (group sender rules) and 8 (sender) are completed per sender by `plans_for`; the
    rest is built once per context shape and memoised, so a new sender costs a few lookups.
    """

    eff: EffectiveContext
    plans: tuple[LayerPlan, ...]
    group_steps: tuple[GroupStep, ...] | None
    group_fallback: str
    sender_tables: tuple[SenderTable, ...]
    notes: tuple[Diagnostic, ...]
    #: per inventory index: the verdicts of the layers that do not depend on the sender
    per_index: dict[int, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def sender_independent(self) -> bool:
        return self.group_steps is None and not self.sender_tables


def build_shape(policy: CompiledPolicy, ctx: RunContext) -> Shape:
    eff, notes = _base_context(policy, ctx)
    g = policy.global_tools
    agent = policy.agents.get(eff.agent) if eff.agent else None
    # An agent without an entry (or a run with no agent) falls back to agents.defaults.tools.
    scope: ToolsScope | None = agent.tools if agent is not None else policy.defaults_tools
    keys = _provider_keys(eff)
    agent_match = _first(scope.by_provider, keys) if scope else None
    global_match = _first(g.by_provider, keys)
    group = _group_steps(policy, eff, notes)
    tables = tuple(t for t in (scope.senders if scope else None, g.senders) if t is not None)
    plans = (
        _profile_layer(policy, g, scope),
        _provider_profile_layer(policy, eff, agent_match, global_match, scope),
        _plain(3, g.policy, "no global tools policy"),
        _plain(
            4,
            global_match.policy if global_match else None,
            "no provider in context" if not keys else "no matching tools.byProvider entry",
        ),
        _plain(
            5,
            scope.policy if scope else None,
            "no agent in context"
            if eff.agent is None
            else f"agent {eff.agent} has no entry"
            if agent is None
            else "agent has no tools policy",
        ),
        _plain(
            6,
            agent_match.policy if agent_match else None,
            "no provider in context" if not keys else "no matching agent byProvider entry",
        ),
        group if isinstance(group, LayerPlan) else _PENDING_GROUP,
        _sender_layer(tables, ["*"]) if not tables else _PENDING_SENDER,
        _sandbox_layer(policy, eff, scope),
        _subagent_layer(policy, eff, scope),
        _inheritance_layer(policy, eff, ctx),
    )
    steps, fallback = (None, "") if isinstance(group, LayerPlan) else group
    return Shape(eff, plans, steps, fallback, tables, tuple(notes))


_PENDING_GROUP = LayerPlan(7, None, "depends on the sender", BASE_LABELS[6])
_PENDING_SENDER = LayerPlan(8, None, "depends on the sender", BASE_LABELS[7])


def plans_for(shape: Shape, sender: Sender) -> tuple[LayerPlan, ...]:
    """The shape's eleven plans with layers 7 and 8 decided for this (normalised) sender."""
    if shape.sender_independent:
        return shape.plans
    candidates = sender_candidates(shape.eff.channel, sender)
    plans = list(shape.plans)
    if shape.group_steps is not None:
        plans[6] = _pick_group(shape.group_steps, shape.group_fallback, candidates)
    if shape.sender_tables:
        plans[7] = _sender_layer(shape.sender_tables, candidates)
    return tuple(plans)


def plan_layers(
    policy: CompiledPolicy, eff: EffectiveContext, ctx: RunContext
) -> tuple[list[LayerPlan], list[Diagnostic]]:
    """The eleven layers for this run, in order, each with its policy or its skip reason."""
    shape = build_shape(policy, ctx)
    return list(plans_for(shape, eff.sender)), list(shape.notes)


def _first(table: Mapping[str, ProviderScope], keys: list[str]) -> ProviderScope | None:
    for key in keys:
        found = table.get(key)
        if found is not None:
            return found
    return None


def _provider_keys(eff: EffectiveContext) -> list[str]:
    if not eff.provider:
        return []
    if eff.model:
        return [f"{eff.provider}/{eff.model}", eff.provider]
    return [eff.provider]


def _plain(stage: int, policy: LayerPolicy | None, reason: str) -> LayerPlan:
    if policy is None:
        return LayerPlan(stage, None, reason, BASE_LABELS[stage - 1])
    return LayerPlan(stage, policy, None, policy.label)


def _profile_layer(policy: CompiledPolicy, g: ToolsScope, scope: ToolsScope | None) -> LayerPlan:
    owner = scope if scope is not None and scope.profile else g
    if owner.profile is None:
        return LayerPlan(1, None, "no profile configured", BASE_LABELS[0])
    also_owner = scope if scope is not None and scope.also_allow is not None else g
    key = ("profile", owner.name, also_owner.name)
    built = policy.memo.get(key)
    if built is None:
        name = owner.profile
        extra = also_owner.also_allow.entries if also_owner.also_allow else ()
        allow = build_list(
            f"{owner.name}.profile",
            owner.profile_source,
            extra,
            policy.catalog.groups,
            policy.catalog.covers,
            base=_profile_base(policy, name),
        )
        built = LayerPolicy(f"tools.profile ({name})", f"{owner.name}.profile", allow, None)
        policy.memo[key] = built
    return LayerPlan(1, built, None, built.label)


def _profile_base(policy: CompiledPolicy, name: str) -> EntryList:
    """A built-in profile's own entries, expanded once and shared by every scope using it."""
    key = ("profile-base", name)
    base = policy.memo.get(key)
    if base is None:
        cat = policy.catalog
        base = build_list("", None, profile_entries(cat, name), cat.groups, cat.covers)
        policy.memo[key] = base
    assert isinstance(base, EntryList)
    return base


def _provider_profile_layer(
    policy: CompiledPolicy,
    eff: EffectiveContext,
    agent_match: ProviderScope | None,
    global_match: ProviderScope | None,
    scope: ToolsScope | None,
) -> LayerPlan:
    if not eff.provider:
        return LayerPlan(2, None, "no provider in context", BASE_LABELS[1])
    source = agent_match if agent_match is not None and agent_match.profile else global_match
    if source is None or source.profile is None:
        return LayerPlan(2, None, "no provider profile for this provider", BASE_LABELS[1])
    also = (
        agent_match.also_allow
        if agent_match is not None and agent_match.also_allow is not None
        else global_match.also_allow
        if global_match is not None
        else None
    )
    key = ("provider-profile", id(source), id(also))
    built = policy.memo.get(key)
    if built is None:
        extra = also.entries if also else ()
        where = f"{source.key}.profile"
        allow = build_list(
            where,
            source.profile_source,
            extra,
            policy.catalog.groups,
            policy.catalog.covers,
            base=_profile_base(policy, source.profile),
        )
        built = LayerPolicy(f"tools.byProvider.profile ({source.profile})", where, allow, None)
        policy.memo[key] = built  # source and also live as long as the policy: ids stay unique
    return LayerPlan(2, built, None, built.label)


GroupStep = tuple[str, "SenderTable | LayerPolicy"]


def _group_steps(
    policy: CompiledPolicy, eff: EffectiveContext, notes: list[Diagnostic]
) -> LayerPlan | tuple[tuple[GroupStep, ...], str]:
    """Layer 7 as far as it can be decided without the sender.

    Either the final plan, or the ordered steps left to try once the sender is known (a
    sender table to match, or a group's `tools` that ends the search) and the skip reason
    when none of them applies.
    """
    if not eff.channel:
        return LayerPlan(7, None, "no channel in context", BASE_LABELS[6])
    channel = policy.channels.get(eff.channel)
    if channel is None:
        return LayerPlan(7, None, f"channel {eff.channel} has no group policy", BASE_LABELS[6])
    groups = channel.groups
    if eff.account is not None:
        if eff.account in channel.accounts:
            account_groups = channel.accounts[eff.account]
            groups = account_groups if account_groups is not None else groups
        elif eff.trigger == "cron":
            notes.append(
                Diagnostic.make(
                    "PC409",
                    f"account {eff.account} of channel {eff.channel} "
                    "has no configuration; the scheduled run gets no tools",
                )
            )
            return LayerPlan(
                7,
                _deny_everything(
                    policy, "account unavailable", f"channels.{eff.channel}.accounts.{eff.account}"
                ),
                None,
                "group tools.allow",
            )
    if not eff.group:
        return LayerPlan(7, None, "no group in context", BASE_LABELS[6])
    if groups is None:
        return LayerPlan(7, None, f"channel {eff.channel} has no groups", BASE_LABELS[6])
    found: GroupPolicy | None = None
    for candidate in group_candidates(eff.group):
        found = groups.get(candidate)
        if found is not None:
            break
    # Precedence, first hit wins: the group's sender rule, the group's tools, the "*" group's
    # sender rule, the "*" group's tools. A `tools` step always hits, so it ends the list.
    steps: list[GroupStep] = []
    for group in (found, groups.get("*")):
        if group is None:
            continue
        if group.senders is not None:
            steps.append(("senders", group.senders))
        if group.tools is not None:
            steps.append(("tools", group.tools))
            break
    fallback = f"no group policy for {eff.group}"
    if not steps:
        return LayerPlan(7, None, fallback, BASE_LABELS[6])
    if steps[0][0] == "tools":
        tools = steps[0][1]
        assert isinstance(tools, LayerPolicy)
        return LayerPlan(7, tools, None, tools.label)
    return tuple(steps), fallback


def _pick_group(steps: tuple[GroupStep, ...], fallback: str, candidates: list[str]) -> LayerPlan:
    for _, value in steps:
        if isinstance(value, LayerPolicy):
            return LayerPlan(7, value, None, value.label)
        plan = _sender_plan(7, "group sender entry", value, candidates)
        if plan is not None:
            return plan
    return LayerPlan(7, None, fallback, BASE_LABELS[6])


def _sender_plan(
    stage: int, what: str, table: SenderTable, candidates: list[str]
) -> LayerPlan | None:
    """The plan a matching sender key gives (a match with an empty policy skips the layer,
    yet still wins over any less specific table); None when no key matches."""
    hit = _match_sender(table, candidates)
    if hit is None:
        return None
    key, matched = hit
    if matched is None:
        return LayerPlan(stage, None, f"{what} {key} has no policy", BASE_LABELS[stage - 1])
    return LayerPlan(stage, matched, None, matched.label)


def sender_candidates(channel: str | None, s: Sender) -> list[str]:
    """The keys a sender may match, most specific first (semantics 7.5)."""
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
    return out


def _match_sender(
    table: SenderTable, candidates: list[str]
) -> tuple[str, LayerPolicy | None] | None:
    policies = table.policies
    for key in candidates:
        if key in policies:
            return key, policies[key]
    return None


def _sender_layer(tables: tuple[SenderTable, ...], candidates: list[str]) -> LayerPlan:
    for table in tables:
        plan = _sender_plan(8, "sender entry", table, candidates)
        if plan is not None:
            return plan
    return LayerPlan(8, None, "no toolsBySender entry matches this sender", BASE_LABELS[7])


def _sandbox_layer(
    policy: CompiledPolicy, eff: EffectiveContext, scope: ToolsScope | None
) -> LayerPlan:
    if not eff.sandboxed:
        why = (
            "not sandboxed (mode=off)"
            if eff.sandbox_mode == "off"
            else "not sandboxed (main session)"
            if eff.session_key
            else "not sandboxed (no session key)"
        )
        return LayerPlan(9, None, why, BASE_LABELS[8])
    # Agents without sandbox lists of their own share the global sandbox policy.
    own = scope is not None and scope.sandbox is not None
    key = ("sandbox", scope.name if own and scope is not None else None)
    built = policy.memo.get(key)
    if built is None:
        built = _sandbox_policy(policy, scope if own else None)
        policy.memo[key] = built
    return LayerPlan(9, built, None, built.label)


def _sandbox_policy(policy: CompiledPolicy, scope: ToolsScope | None) -> LayerPolicy:
    """Semantics 7.6: per-field fallback agent -> global -> catalog default."""
    cat = policy.catalog
    lists = [
        s.sandbox for s in (scope, policy.global_tools) if s is not None and s.sandbox is not None
    ]

    def pick(field: str) -> tuple[tuple[Entry, ...] | None, str, Source | None]:
        for lst in lists:
            value = getattr(lst, field)
            if value is not None:
                return value.entries, value.key, value.source
        return None, "", None

    allow_cfg, allow_key, allow_src = pick("allow")
    also_cfg, also_key, also_src = pick("also_allow")
    deny_cfg, deny_key, deny_src = pick("deny")
    also = list(also_cfg or ())
    if not allow_cfg:
        # The catalog default applies: the edit that widens it is alsoAllow (setting `allow`
        # would replace the default list, not add to it).
        owner = scope.name if scope is not None else "tools"
        allow_key = also_key or f"{owner}.sandbox.tools.alsoAllow"
        allow_src = also_src
    allow: list[Entry] | None
    if allow_cfg is not None and not allow_cfg:
        allow = None  # configured [] -> allow everything (alsoAllow ignored)
    elif allow_cfg:
        allow = [*allow_cfg, *also]
    else:
        allow = [*catalog_entries(cat.sandbox_allow, cat, "sandbox default allow"), *also]
    explicit = build_list("", None, [*(allow_cfg or ()), *also], cat.groups, cat.covers)
    if deny_cfg is not None:
        deny = list(deny_cfg)
    else:
        deny = [
            e
            for e in catalog_entries(cat.sandbox_deny, cat, "sandbox default deny")
            if explicit.match(e.text) is None
        ]
    allow_list = build_list(allow_key, allow_src, allow, cat.groups, cat.covers) if allow else None
    deny_list = build_list(
        deny_key or "tools.sandbox.tools.deny", deny_src, deny, cat.groups, cat.covers
    )
    image = cat.image_tool
    if (
        allow_list is not None
        and allow_list.restrictive
        and image
        and image not in allow_list.names
        and image not in deny_list.names
    ):
        allow_list = build_list(
            allow_key,
            allow_src,
            [*allow_list.entries, *catalog_entries([image], cat, "sandbox image tool")],
            cat.groups,
            cat.covers,
        )
    owner = scope.name if scope is not None else "tools"
    return LayerPolicy("sandbox tools.allow", f"{owner}.sandbox.tools", allow_list, deny_list)


def _subagent_layer(
    policy: CompiledPolicy, eff: EffectiveContext, scope: ToolsScope | None
) -> LayerPlan:
    if eff.subagent_depth <= 0:
        return LayerPlan(10, None, "not a subagent run", BASE_LABELS[9])
    configured = (
        scope.subagents
        if scope is not None and scope.subagents is not None
        else policy.global_tools.subagents
    )
    leaf = eff.role == "leaf"
    key = ("subagent", id(configured), leaf)
    built = policy.memo.get(key)
    if built is None:
        cat = policy.catalog
        names = [*cat.subagent_deny_always, *(cat.subagent_deny_leaf if leaf else ())]
        base = catalog_entries(names, cat, f"subagent {'leaf ' if leaf else ''}deny (catalog)")
        extra = configured.deny.entries if configured is not None and configured.deny else ()
        deny = build_list(
            "tools.subagents.tools.deny", None, [*base, *extra], cat.groups, cat.covers
        )
        allow = configured.allow if configured is not None else None
        built = LayerPolicy("subagent tools.allow", "tools.subagents.tools", allow, deny)
        policy.memo[key] = built
    return LayerPlan(10, built, None, built.label)


def _inheritance_layer(policy: CompiledPolicy, eff: EffectiveContext, ctx: RunContext) -> LayerPlan:
    cap = ctx.parent
    memory = eff.trigger == "memory"
    if cap is None and not memory:
        return LayerPlan(11, None, "no parent run", BASE_LABELS[10])
    key = ("inherit", cap, memory)
    built = policy.memo.get(key)
    if built is None:
        cat = policy.catalog
        allow_names: list[str] | None = (
            list(cap.allow) if cap is not None and cap.allow is not None else None
        )
        source = cap.source if cap is not None else "memory flush"
        if memory:
            keep = cat.memory_flush_tools
            allow_names = (
                [n for n in allow_names if n in keep] if allow_names is not None else list(keep)
            )
            source = f"{source} + memory flush" if cap is not None else source
        allow = None
        if allow_names is not None:
            entries = [Entry(n, n, source, None, "inherited") for n in allow_names] or [
                Entry(NOTHING, "[]", source, None, "inherited")
            ]
            allow = build_list(source, None, entries, {}, {})
        deny = None
        if cap is not None and cap.deny:
            deny = build_list(
                source, None, [Entry(n, n, source, None, "inherited") for n in cap.deny], {}, {}
            )
        built = LayerPolicy("inherited tools", source, allow, deny, grants=False)
        if len(policy.memo) < 100_000:
            policy.memo[key] = built
    return LayerPlan(11, built, None, built.label)


def _deny_everything(policy: CompiledPolicy, why: str, scope: str) -> LayerPolicy:
    key = ("deny-all", scope)
    built = policy.memo.get(key)
    if built is None:
        star = Entry("*", "*", why, None, "catalog")
        built = LayerPolicy(
            "group tools.allow", scope, None, build_list(scope, None, [star], {}, {})
        )
        policy.memo[key] = built
    return built
