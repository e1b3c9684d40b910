"""validate's call-rule checks: rules that can never match, allows a deny shadows, rules that
never decide a call (contract section 9), each at the entry's file:line:col.

- PC470: a shell specifier whose command word the analysis never leaves in place (shells,
  `eval`/`source`, reserved words, wrappers with a command after them: `call_cover`).
- PC471: an allow specifier every call of which a deny (or ask) specifier of the same layer
  policy also meets: the deny wins, the allow never decides a call there; likewise an ask
  specifier a deny of the same layer covers.
- PC439: a `name(key=glob)` rule on a tool neither the catalog nor the declared inventory has
  (a typo of a tool: the closest name is suggested).
- PC441: a `name(key=glob)` rule on a key the tool's declared parameters do not have.
- PC490: a deny or ask shell specifier that names a subcommand of a command the command
  catalog does not model: global options could hide the subcommand.
- PC472: a specifier that decides no call in any context of the matrix: its tool is not
  allowed wherever its list applies (or its list never applies). Checked only on the whole
  matrix: a sample cannot show "in no context".

Unparsable specifiers are compile errors (PC350-PC357), reported before these run. The
findings are warnings, errors under `--strict`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from ..callrules.keyed import KeyedMatcher
from ..callrules.model import Effect, Rule, RuleIndex, ToolCallRules
from ..catalog.commands import builtin_commands
from ..catalog.model import Catalog
from ..compile.compiled import CompiledPolicy, tools_scopes
from ..compile.layers import LayerPolicy
from ..diagnostics import Diagnostic, Severity, did_you_mean
from ..names import normalize
from ..pipeline.resolve import resolve
from .call_cover import covers, never_matching, unmodelled_subcommand
from .matrix import Matrix
from .matrixwalk import DistinctRun


def layer_policies(policy: CompiledPolicy, calls_only: bool = True) -> Iterator[LayerPolicy]:
    """Every layer policy a run can apply (assembled sandbox and subagent ones included);
    with `calls_only`, those that have call rules."""
    found: list[LayerPolicy | None] = []
    for scope in tools_scopes(policy):
        found.append(scope.policy)
        found.extend(ps.policy for ps in scope.by_provider.values())
        found.extend(scope.senders.policies.values() if scope.senders else ())
        found.append(scope.subagents)
    tables: set[int] = set()
    for layers in policy.layers.values():
        plans = [layers.profile, layers.sandbox, layers.subagent, layers.subagent_leaf]
        plans += [layers.agent] if layers.agent is not None else []
        for pp in (layers.unmatched, *layers.providers.values()):
            plans += [pp.provider_profile, pp.global_by_provider, pp.agent_by_provider]
        found.extend(plan.policy for plan in plans)
        for table in layers.sender_tables:
            # every agent's layers share the global table: list it once, not once per agent
            if id(table) not in tables:
                tables.add(id(table))
                found.extend(table.policies.values())
    for channel in policy.channels.values():
        for groups in (channel.groups, *channel.accounts.values()):
            for group in (groups or {}).values():
                found.append(group.tools)
                found.extend(group.senders.policies.values() if group.senders else ())
    seen: set[int] = set()
    for lp in found:
        if lp is not None and (lp.calls is not None or not calls_only) and id(lp) not in seen:
            seen.add(id(lp))
            yield lp


def _tool_rules(policy: CompiledPolicy) -> Iterator[tuple[LayerPolicy, ToolCallRules]]:
    for lp in layer_policies(policy):
        assert lp.calls is not None
        for rules in lp.calls.tools.values():
            yield lp, rules


def _written(rule: Rule, catalog: Catalog) -> bool:
    """A rule written for its tool (or a cover of it: `canvas(...)` is also `show_widget`'s),
    not one a catalog grant derived from another tool's allow (`write(...)` for apply_patch)."""
    head = normalize(rule.entry.split("(", 1)[0], catalog.aliases)
    return head == rule.tool or rule.tool in catalog.covers.get(head, ())


def _where(rule: Rule) -> str:
    return str(rule.source) if rule.source is not None else "?"


def call_rule_checks(
    policy: CompiledPolicy,
    matrix: Matrix,
    *,
    strict: bool = False,
    runs: Sequence[DistinctRun] | None = None,
) -> list[Diagnostic]:
    """The findings, warnings (errors under `--strict`: a rule that never does what it says
    is as much a mistake as an entry that names nothing)."""
    if not policy.has_call_rules:
        return []
    out: list[Diagnostic] = []
    every: list[tuple[LayerPolicy, Rule]] = []
    budget = _Budget(SHADOW_COMPARISONS)
    for lp, rules in _tool_rules(policy):
        for rule in (*rules.deny, *rules.ask, *rules.allow):
            every.append((lp, rule))
        out.extend(_shadowed(lp, rules, policy.catalog, budget))
    if budget.stopped_at is not None:
        out.append(
            Diagnostic.make(
                "PC417",
                f"the shadowing check (PC471) stopped after {SHADOW_COMPARISONS:,} comparisons "
                f'of specifiers, at "{budget.stopped_at.entry}": it and the specifiers checked '
                "after it may be shadowed without a warning",
                budget.stopped_at.source,  # type: ignore[arg-type]
                "",
                "split the policy's specifiers over fewer tools per layer, or check a smaller "
                "part of the policy",
            )
        )
    for lp, rule in every:
        found = never_matching(rule)
        if found is not None:
            out.append(
                Diagnostic.make(
                    "PC470",
                    f'"{rule.entry}" in {lp.scope} can never match: {found.reason}',
                    rule.source,  # type: ignore[arg-type]
                    lp.scope,
                    found.fix,
                )
            )
    commands = policy.commands or builtin_commands()
    for lp, rule in every:
        if rule.effect is Effect.ALLOW or not _written(rule, policy.catalog):
            continue
        sub = unmodelled_subcommand(rule, commands)
        if sub is not None:
            command = rule.entry.split("(", 1)[1].split()[0]
            out.append(
                Diagnostic.make(
                    "PC490",
                    f'"{rule.entry}" in {lp.scope} names the subcommand {sub} of {command}, '
                    f"which the command catalog does not model: a global option before it "
                    f"({command} --option {sub}) can keep this rule from meeting the call",
                    rule.source,  # type: ignore[arg-type]
                    lp.scope,
                    f"model {command} in the policy's `commands` key (its global options, "
                    f"payload: subcommand), or write {command} * {sub} *",
                )
            )
    unknown = list(_unknown_tools(policy, every))
    out.extend(unknown)
    out.extend(_unknown_keys(policy, every))
    named_nothing = {str(d.source) for d in unknown}
    out.extend(
        d
        for d in _never_deciding(policy, matrix, every, runs)
        if str(d.source) not in named_nothing
    )
    # a rule the sandbox or subagent layer reuses from its scope is reported once, at its
    # own file:line:col
    unique: dict[tuple[str, str], Diagnostic] = {}
    for d in out:
        unique.setdefault((d.code, str(d.source)), d)
    findings = list(unique.values())
    if strict:
        findings = [replace(d, severity=Severity.ERROR) for d in findings]
    return findings


#: comparisons of two specifiers the shadowing check may make over one policy: candidates come
#: from the first-word index, so only rules on the same command (or paths, URLs, keyed rules)
#: are compared; the cap keeps a policy of many such rules within the command budget
SHADOW_COMPARISONS = 500_000


@dataclass
class _Budget:
    left: int
    #: the first specifier left unchecked when the budget ran out
    stopped_at: Rule | None = None


def _covering(index: RuleIndex, narrow: Rule, budget: _Budget) -> Rule | None:
    # a shell pattern with a literal first word only meets commands of that word, so only
    # rules with that word or none can cover it
    for rule in index.in_order(narrow.matcher.first_word):
        budget.left -= 1
        if budget.left < 0:
            budget.stopped_at = budget.stopped_at or narrow
            return None
        if covers(rule.matcher, narrow.matcher):
            return rule
    return None


def _shadowed(
    lp: LayerPolicy, rules: ToolCallRules, catalog: Catalog, budget: _Budget
) -> Iterator[Diagnostic]:
    for allow in rules.allow:
        if budget.left < 0:
            return
        if not _written(allow, catalog):
            continue
        for effect, broader in (("deny", rules.deny_index), ("ask", rules.ask_index)):
            hit = _covering(broader, allow, budget)
            if hit is None:
                continue
            outcome = "refused" if effect == "deny" else "asked"
            yield Diagnostic.make(
                "PC471",
                f'allow "{allow.entry}" in {lp.scope} never decides a call: every call it '
                f'admits is {outcome} by {effect} "{hit.entry}" ({_where(hit)}) in the same '
                f"scope, which wins",
                allow.source,  # type: ignore[arg-type]
                lp.scope,
                f'narrow "{hit.entry}", or write the allow so that it admits calls the '
                f"{effect} does not meet (it also admits {allow.tool} by name at this layer)",
            )
            break
    for ask in rules.ask:
        if budget.left < 0:
            return
        if not _written(ask, catalog):
            continue
        hit = _covering(rules.deny_index, ask, budget)
        if hit is None:
            continue
        yield Diagnostic.make(
            "PC471",
            f'ask "{ask.entry}" in {lp.scope} never asks: every call it meets is refused by '
            f'deny "{hit.entry}" ({_where(hit)}) in the same scope, which wins',
            ask.source,  # type: ignore[arg-type]
            lp.scope,
            f'remove "{ask.entry}", or narrow "{hit.entry}"',
        )


def _unknown_tools(
    policy: CompiledPolicy, every: Iterable[tuple[LayerPolicy, Rule]]
) -> Iterator[Diagnostic]:
    """PC439: rules on a tool neither the catalog nor the declared inventory has."""
    catalog = policy.catalog
    known = set(catalog.tool_ids) | set(policy.default_inventory.names)
    known.update(catalog.aliases.values())
    words: list[str] | None = None
    for lp, rule in every:
        if rule.tool in known or not _written(rule, catalog):
            continue
        words = words if words is not None else sorted(known)
        best = did_you_mean(rule.tool, words)
        hint = f'; did you mean "{best}"?' if best else ""
        yield Diagnostic.make(
            "PC439",
            f'"{rule.entry}" in {lp.scope} is a call rule on {rule.tool}, a tool neither the '
            f"catalog nor the declared inventory has, so it decides no call{hint}",
            rule.source,  # type: ignore[arg-type]
            lp.scope,
            f"write {best}{rule.entry[rule.entry.find('(') :]}"
            if best
            else f"declare {rule.tool} under inventory: if the deployment has it",
        )


def _unknown_keys(
    policy: CompiledPolicy, every: Iterable[tuple[LayerPolicy, Rule]]
) -> Iterator[Diagnostic]:
    """PC441: a `name(key=glob)` rule whose key the tool's declared parameters do not have
    (the inventory gives them: `inventory.plugins[].parameters`). A key no call carries never
    matches: a deny or ask keyed so protects nothing, an allow admits nothing. A schema that
    admits other keys explicitly (`additionalProperties: true` or a schema) is not checked."""
    for lp, rule in every:
        schema = policy.declared_parameters.get(rule.tool)
        if schema is None or not isinstance(rule.matcher, KeyedMatcher):
            continue
        props = schema.get("properties")
        if not isinstance(props, Mapping) or schema.get("additionalProperties") not in (
            None,
            False,
        ):
            continue  # a schema that lets other keys in says nothing about this one
        for cond in rule.matcher.conditions:
            head = cond.path[0]
            if head in props or cond.key in props:
                continue
            best = did_you_mean(head, sorted(props))
            hint = f'; did you mean "{best}"?' if best else ""
            yield Diagnostic.make(
                "PC441",
                f'"{rule.entry}" in {lp.scope} reads argument "{head}", which {rule.tool}\'s '
                f"declared parameters do not list (they are: {', '.join(sorted(props))}): a call "
                f"that follows them never carries it, so the rule never matches one{hint}",
                rule.source,  # type: ignore[arg-type]
                lp.scope,
                f"write {best}= instead of {head}=" if best else "name one of the parameters",
            )


def _never_deciding(
    policy: CompiledPolicy,
    matrix: Matrix,
    every: Iterable[tuple[LayerPolicy, Rule]],
    runs: Sequence[DistinctRun] | None,
) -> Iterator[Diagnostic]:
    """Rules no context's call layers hold: their tool is never allowed where they apply."""
    if matrix.sampled:
        return
    seen: set[str] = set()
    # the compiled ToolCallRules are shared by every run whose layer applies them: each is
    # read once (a policy with thousands of rules and contexts stays linear)
    read: dict[int, ToolCallRules] = {}
    # contexts whose layers apply the same policies have the same call layers (matrixwalk)
    resolutions = (
        (run.resolution for run in runs)
        if runs is not None
        else (resolve(policy, cell.context, require_tools=False) for cell in matrix.contexts)
    )
    for res in resolutions:
        for layer in res.call_layers:
            for rules in layer.tools.values():
                if id(rules) in read:
                    continue
                read[id(rules)] = rules  # kept alive: no id is reused
                for rule in (*rules.deny, *rules.ask, *rules.allow):
                    seen.add(_where(rule))
    for lp, rule in every:
        if _where(rule) in seen or not _written(rule, policy.catalog):
            continue
        yield Diagnostic.make(
            "PC472",
            f'"{rule.entry}" in {lp.scope} never decides a call: no context of the policy has '
            f"{rule.tool} where this list applies",
            rule.source,  # type: ignore[arg-type]
            lp.scope,
            f"remove the rule, or allow {rule.tool} in the runs it is meant for",
        )
