"""Layer selection: a run's facts + the compiled policy -> the plan of each of the eleven layers.

Lookups only: every policy a layer may apply was assembled at compile time (`assemble`), so a
new context costs a few dictionary reads (agent, provider key, channel, group candidates)
and a new sender two more (`plans_for`). The one thing built here is the inheritance layer,
which comes from the parent run rather than from the document.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..compile.compiled import (
    NO_PROVIDER,
    CompiledPolicy,
    GroupPolicy,
    ProviderPlans,
    ScopeLayers,
    SenderTable,
)
from ..compile.entries import Entry, build_list, literal_list
from ..compile.layers import Layer, LayerPlan, LayerPolicy, applied, skipped
from ..context import Capture, Sender, group_candidates
from ..diagnostics import Diagnostic
from .context import Facts, sender_candidates

NOTHING = "(none)"  # a name no tool can have (not ASCII-valid): "no tools at all"

#: a group step: the sender rules of a group (label, table) or its `tools` (label, policy)
GroupStep = tuple[str, "SenderTable | LayerPolicy"]


@dataclass(frozen=True, slots=True, eq=False)
class Shape:
    """Everything about a run's layers that does not depend on who the sender is.

    Layers 7 (group sender rules) and 8 (sender) are completed per sender by `plans_for`."""

    facts: Facts
    plans: tuple[LayerPlan, ...]
    group_steps: tuple[GroupStep, ...] | None
    group_fallback: str
    sender_tables: tuple[SenderTable, ...]
    notes: tuple[Diagnostic, ...]
    #: layer 7 for a sender that no group sender rule matches (most senders): built once
    group_miss: LayerPlan | None = None

    @property
    def sender_independent(self) -> bool:
        return self.group_steps is None and not self.sender_tables


_PENDING_GROUP = skipped(Layer.GROUP, "depends on the sender")
_PENDING_SENDER = skipped(Layer.SENDER, "depends on the sender")


def build_shape(policy: CompiledPolicy, facts: Facts) -> Shape:
    notes: list[Diagnostic] = []
    agent = facts.agent
    scope: ScopeLayers = policy.layers.get(agent) or policy.layers[None]
    provider = _provider_plans(scope, facts)
    agent_plan = scope.agent
    if agent_plan is None:
        agent_plan = skipped(
            Layer.AGENT,
            "no agent in context" if agent is None else f"agent {agent} has no entry",
        )
    group = _group_steps(policy, facts, notes)
    tables = scope.sender_tables
    plans = (
        scope.profile,
        provider.provider_profile,
        _global_plan(policy),
        provider.global_by_provider,
        agent_plan,
        provider.agent_by_provider,
        group if isinstance(group, LayerPlan) else _PENDING_GROUP,
        _sender_layer(tables, ("*",)) if not tables else _PENDING_SENDER,
        scope.sandbox if facts.sandboxed else skipped(Layer.SANDBOX, _unsandboxed(facts)),
        _subagent_plan(scope, facts),
        _inheritance_layer(policy, facts),
    )
    steps, fallback = (None, "") if isinstance(group, LayerPlan) else group
    miss = _pick_group(steps, fallback, ()) if steps is not None else None
    return Shape(facts, plans, steps, fallback, tables, tuple(notes), miss)


def plans_for(shape: Shape, sender: Sender) -> tuple[LayerPlan, ...]:
    """The shape's eleven plans with layers 7 and 8 decided for this (normalised) sender."""
    if shape.sender_independent:
        return shape.plans
    candidates = sender_candidates(shape.facts.channel, sender)
    plans = list(shape.plans)
    steps = shape.group_steps
    if steps is not None:
        plan = shape.group_miss
        for _, value in steps:
            if isinstance(value, LayerPolicy):
                break  # every sender rule before this `tools` missed: the shared plan
            if _match_sender(value, candidates) is not None:
                plan = _pick_group(steps, shape.group_fallback, candidates)
                break
        assert plan is not None
        plans[Layer.GROUP - 1] = plan
    if shape.sender_tables:
        plans[Layer.SENDER - 1] = _sender_layer(shape.sender_tables, candidates)
    return tuple(plans)


def _global_plan(policy: CompiledPolicy) -> LayerPlan:
    lp = policy.global_tools.policy
    return applied(Layer.GLOBAL, lp) if lp is not None else _NO_GLOBAL


_NO_GLOBAL = skipped(Layer.GLOBAL, "no global tools policy")


def _provider_plans(scope: ScopeLayers, facts: Facts) -> ProviderPlans:
    if not facts.provider:
        return NO_PROVIDER
    providers = scope.providers
    if facts.model:
        found = providers.get(f"{facts.provider}/{facts.model}")
        if found is not None:
            return found
    return providers.get(facts.provider) or scope.unmatched


def _unsandboxed(facts: Facts) -> str:
    if facts.sandbox_mode == "off":
        return "not sandboxed (mode=off)"
    return f"not sandboxed ({facts.session})"


def _subagent_plan(scope: ScopeLayers, facts: Facts) -> LayerPlan:
    if facts.subagent_depth <= 0:
        return _NOT_SUBAGENT
    return scope.subagent_leaf if facts.role == "leaf" else scope.subagent


_NOT_SUBAGENT = skipped(Layer.SUBAGENT, "not a subagent run")


# -- layer 7 ------------------------------------------------------------------------------------


def _group_steps(
    policy: CompiledPolicy, facts: Facts, notes: list[Diagnostic]
) -> LayerPlan | tuple[tuple[GroupStep, ...], str]:
    """Layer 7 as far as it can be decided without the sender.

    Either the final plan, or the ordered steps left to try once the sender is known (a
    sender table to match, or a group's `tools` that ends the search) and the skip reason
    when none of them applies.
    """
    channel = policy.channels.get(facts.channel) if facts.channel else None
    if facts.account is not None and facts.trigger == "cron":
        # A scheduled run of an account with no configuration left fails closed, rather than
        # fall back to the looser channel-wide groups (semantics 7.4).
        configured = (
            channel is not None and facts.account in channel.accounts
            if facts.channel
            else any(facts.account in c.accounts for c in policy.channels.values())
        )
        if not configured:
            where = f"channels.{facts.channel or '<any>'}.accounts.{facts.account}"
            notes.append(
                Diagnostic.make(
                    "PC409",
                    f"account {facts.account} of channel {facts.channel or '(none given)'} "
                    "has no configuration; the scheduled run gets no tools",
                )
            )
            return applied(Layer.GROUP, _deny_everything("account unavailable", where))
    if not facts.channel:
        return skipped(Layer.GROUP, "no channel in context")
    if channel is None:
        return skipped(Layer.GROUP, f"channel {facts.channel} has no group policy")
    groups = channel.groups
    if facts.account is not None and facts.account in channel.accounts:
        account_groups = channel.accounts[facts.account]
        groups = account_groups if account_groups is not None else groups
    if not facts.group:
        return skipped(Layer.GROUP, "no group in context")
    if groups is None:
        return skipped(Layer.GROUP, f"channel {facts.channel} has no groups")
    found: GroupPolicy | None = None
    found_id = ""
    for candidate in group_candidates(facts.group):
        found = groups.get(candidate)
        if found is not None:
            found_id = candidate
            break
    # Precedence, first hit wins: the group's sender rule, the group's tools, the "*" group's
    # sender rule, the "*" group's tools. A `tools` step always hits, so it ends the list.
    steps: list[GroupStep] = []
    for gid, group in ((found_id, found), ("*", groups.get("*"))):
        if group is None:
            continue
        if group.senders is not None:
            steps.append((f"group {gid} toolsBySender", group.senders))
        if group.tools is not None:
            steps.append((f"group {gid} tools", group.tools))
            break
    fallback = f"no group policy for {facts.group}"
    if not steps:
        return skipped(Layer.GROUP, fallback)
    first = steps[0][1]
    if isinstance(first, LayerPolicy):
        return applied(Layer.GROUP, first)
    return tuple(steps), fallback


def _pick_group(
    steps: tuple[GroupStep, ...], fallback: str, candidates: tuple[str, ...]
) -> LayerPlan:
    passed: list[str] = []
    for i, (what, value) in enumerate(steps):
        if isinstance(value, LayerPolicy):
            return applied(Layer.GROUP, value, _shadow_note(what, passed, steps, i))
        hit = _match_sender(value, candidates)
        if hit is None:
            passed.append(f"{what}: no key matches this sender")
            continue
        key, matched = hit
        detail = _shadow_note(f'{what} "{key}"', passed, steps, i)
        if matched is None:
            return skipped(Layer.GROUP, f"group sender entry {key} has no policy", detail)
        return applied(Layer.GROUP, matched, detail)
    return skipped(Layer.GROUP, fallback, "; ".join(passed) or None)


def _shadow_note(
    chosen: str, passed: list[str], steps: tuple[GroupStep, ...], i: int
) -> str | None:
    """Which group rule applied, and which were skipped and why (semantics 7.4: first hit
    wins, no merging). A group's `tools` passed over because its toolsBySender matched is
    the case operators miss: its entries do not apply to this sender at all. Only the last
    step can be a `tools` step (one always hits, so it ends the list)."""
    what, last = steps[-1]
    shadowed = i < len(steps) - 1 and isinstance(last, LayerPolicy)
    if not passed and not shadowed:
        return None
    parts = [*passed, f"{chosen} applied"]
    if shadowed:
        parts.append(
            f"{what} skipped: {chosen} matched first (first hit wins, rules are not merged)"
        )
    return "; ".join(parts)


# -- layer 8 ------------------------------------------------------------------------------------


def _match_sender(
    table: SenderTable, candidates: tuple[str, ...]
) -> tuple[str, LayerPolicy | None] | None:
    policies = table.policies
    for key in candidates:
        if key in policies:
            return key, policies[key]
    return None


def _sender_layer(tables: tuple[SenderTable, ...], candidates: tuple[str, ...]) -> LayerPlan:
    for table in tables:
        hit = _match_sender(table, candidates)
        if hit is None:
            continue
        key, matched = hit
        if matched is None:
            return skipped(Layer.SENDER, f"sender entry {key} has no policy")
        return applied(Layer.SENDER, matched)
    return _NO_SENDER_MATCH


_NO_SENDER_MATCH = skipped(Layer.SENDER, "no toolsBySender entry matches this sender")


# -- layer 11 -----------------------------------------------------------------------------------


def _inheritance_layer(policy: CompiledPolicy, facts: Facts) -> LayerPlan:
    """The parent's tools as literal names (semantics 7.8, 7.10), and the memory flush."""
    cap: Capture | None = facts.parent
    memory = facts.trigger == "memory"
    if cap is None:
        return _memory_flush_plan(policy.memory_flush) if memory else _NO_PARENT
    allow_names: list[str] | None = list(cap.allow) if cap.allow is not None else None
    source = cap.source
    if memory:
        keep = policy.memory_flush
        allow_names = [n for n in allow_names if n in keep] if allow_names is not None else [*keep]
        source = f"{source} + memory flush"
    allow = (
        literal_list(source, source, allow_names or [NOTHING]) if allow_names is not None else None
    )
    deny = literal_list(source, source, cap.deny) if cap.deny else None
    built = LayerPolicy("inherited tools", source, allow, deny, grants=False)
    return applied(Layer.INHERITANCE, built)


_NO_PARENT = skipped(Layer.INHERITANCE, "no parent run")


@lru_cache(maxsize=64)
def _memory_flush_plan(keep: tuple[str, ...]) -> LayerPlan:
    """The inheritance layer of a memory flush with no parent: the same for every such run of
    a catalog, so built once (validate's matrix has a memory-flush twin of every context)."""
    source = "memory flush"
    allow = literal_list(source, source, [*keep] or [NOTHING])
    built = LayerPolicy("inherited tools", source, allow, None, grants=False)
    return applied(Layer.INHERITANCE, built)


def _deny_everything(why: str, scope: str) -> LayerPolicy:
    star = Entry("*", "*", why, None, "catalog")
    return LayerPolicy("group tools.allow", scope, None, build_list(scope, None, [star], {}, {}))
