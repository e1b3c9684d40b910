"""Policy tests: what a policy must guarantee, written down next to it and checked in CI.

A test file names a policy, cases (a context and what must hold in it: tools denied, tools
allowed, the exact allowed list, the layer that must remove a tool, and `calls`: the decision
allow / ask / deny each call must get, and optionally the layer that decides it) and
invariants checked over the whole context matrix (`never`: tools no context may get, unless
a condition holds; `subagentSubsetOfParent`). Failures carry the trail of the tool (or the
call) that broke the expectation. Coverage says which policy entries decided at least one
case, and which never did.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ConfigDict, Field, ValidationError

from ..api import load_policy
from ..compile.compiled import CompiledPolicy
from ..compile.entries import Entry
from ..diagnostics import PolicyError, Source
from ..document.extends import load_document
from ..explain.tool import decide_tool
from ..formats.strict import StrictModel as _Strict
from ..pipeline.resolve import resolve
from ..pipeline.result import Resolution
from .checks import iter_scopes
from .contextspec import ContextSpec
from .invariants import (
    INVARIANT_MAX_CONTEXTS,
    NeverInvariant,
    SubsetInvariant,
    check_never,
    check_subset,
    walk,
)
from .testnames import named_policy_path, names_nothing, normal_name, stands_for

if TYPE_CHECKING:
    from ..callrules.model import CallDecision
from ..formats.schema_errors import diagnostics_from_validation


class Expect(_Strict):
    denied: list[str] | None = None
    allowed: list[str] | None = None
    only: list[str] | None = None
    removed_by: dict[str, int] | None = Field(None, alias="removedBy")


class CallCase(_Strict):
    """One call and the decision it must get: `decidedBy` names the layer whose verdict
    decides it, by number (like `removedBy`), by name (`agent`) or by its label in the trail
    (`agents.coder.tools.allow`)."""

    tool: str
    args: dict[str, Any] = {}
    expect: Literal["allow", "ask", "deny"]
    decided_by: int | str | None = Field(None, alias="decidedBy")


class Case(_Strict):
    name: str
    context: ContextSpec = ContextSpec()
    expect: Expect = Expect()
    calls: list[CallCase] = []


class PolicyTestFile(_Strict):
    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        json_schema_extra={"title": "policyctl policy test file"},
    )

    policy: str
    cases: list[Case] = []
    invariants: list[NeverInvariant | SubsetInvariant] = []


# -- results -----------------------------------------------------------------------------------


@dataclass
class CaseResult:
    name: str
    source: Source | None
    failures: list[str] = field(default_factory=list)
    kind: str = "case"  # "case" or "invariant"
    #: set when an invariant was checked on a sample of the context matrix only: "10000 of
    #: 2706984"; finding no violation in a sample does not show the invariant holds
    sample: str | None = None
    #: the sampled check was accepted as a pass (`allow_sampled`, `--allow-sampled`)
    accepted: bool = False

    @property
    def inconclusive(self) -> bool:
        """No violation found, but only a sample was checked and that was not accepted."""
        return not self.failures and self.sample is not None and not self.accepted

    @property
    def passed(self) -> bool:
        return not self.failures and not self.inconclusive


@dataclass
class FileResult:
    path: str
    policy_path: str
    results: list[CaseResult]
    covered: set[tuple[str, str]] = field(default_factory=set)
    #: where the call rules that decided a call case are written (file:line:col)
    covered_sources: set[str] = field(default_factory=set)
    entries: list[Entry] = field(default_factory=list)
    contexts_checked: int = 0
    contexts_total: int = 0

    @property
    def failed(self) -> int:
        return sum(1 for r in self.results if not r.passed)

    def uncovered(self) -> list[Entry]:
        return [
            e
            for e in self.entries
            if _entry_id(e) not in self.covered and str(e.source) not in self.covered_sources
        ]


def _entry_id(entry: Entry) -> tuple[str, str]:
    return (entry.key, str(entry.source))


def load_test_file(path: str | Path) -> tuple[PolicyTestFile, Any]:
    loaded = load_document(path)
    try:
        return PolicyTestFile.model_validate(loaded.data), loaded.locations
    except ValidationError as exc:
        raise PolicyError(
            diagnostics_from_validation(
                exc, loaded.locations, model=PolicyTestFile, data=loaded.data
            )
        ) from None


def _trail(res: Resolution, tool: str) -> list[str]:
    decision = decide_tool(res, tool)
    lines = []
    if decision.removal is not None:
        r = decision.removal
        where = "construction" if r.stage == 0 else f"layer {r.stage}"
        what = f'deny "{r.entry}"' if r.kind == "deny" else r.kind
        lines.append(
            f"{tool}: removed at {where} ({r.label}) by {what}"
            + (f" at {r.source}" if r.source else "")
        )
    elif decision.allowed:
        kept = [layer.label for layer in res.layers if layer.applied]
        lines.append(f"{tool}: allowed; applied layers: {', '.join(kept) or 'none'}")
    else:
        lines.append(f"{tool}: not in this run's inventory")
    if decision.fix:
        lines.append(f"fix: {decision.fix}")
    return lines


def check_case(
    case: Case,
    res: Resolution,
    policy: CompiledPolicy,
    decided: list[CallDecision] | None = None,
) -> list[str]:
    """The case's failures; the decisions of its calls are appended to `decided`."""

    def norm(name: str) -> str:
        return normal_name(name, policy)

    failures: list[str] = []

    def tools_of(names: list[str] | None) -> list[str]:
        """Each name's tools in this run (testnames); a name that names none fails."""
        out: list[str] = []
        for name in map(norm, names or ()):
            found = stands_for(name, res, policy)
            if not found:
                failures.append(names_nothing(name, res))
            out.extend(t for t in found if t not in out)
        return out

    expect = case.expect
    for tool in tools_of(expect.denied):
        if res.is_allowed(tool):
            failures.append(f"expected {tool} denied, but it is allowed")
            failures.extend("  " + line for line in _trail(res, tool))
    for tool in tools_of(expect.allowed):
        if not res.is_allowed(tool):
            failures.append(f"expected {tool} allowed, but it is not")
            failures.extend("  " + line for line in _trail(res, tool))
    if expect.only is not None:
        want = set(tools_of(expect.only))
        got = set(res.allowed)
        if want != got:
            extra, missing = sorted(got - want), sorted(want - got)
            failures.append(
                "the allowed tools differ from `only`"
                + (f"; also allowed: {', '.join(extra)}" if extra else "")
                + (f"; missing: {', '.join(missing)}" if missing else "")
            )
            for tool in missing[:5]:
                failures.extend("  " + line for line in _trail(res, tool))
    for named, stage in (expect.removed_by or {}).items():
        for tool in tools_of([named]):
            removal = res.removal(tool)
            if removal is None or removal.stage != stage:
                now = "allowed" if removal is None else f"removed at stage {removal.stage}"
                failures.append(f"expected {tool} removed by layer {stage}, but it is {now}")
                failures.extend("  " + line for line in _trail(res, tool))
    if case.calls:  # the call-rule core loads only for test files that use it
        from ..explain.decisions import check_call

    for call in case.calls:
        decision, call_failures = check_call(
            res, norm(call.tool), call.args, call.expect, call.decided_by
        )
        failures.extend(call_failures)
        if decided is not None:
            decided.append(decision)
    return failures


def _record_coverage(res: Resolution, covered: set[tuple[str, str]]) -> None:
    """Entries that decided something in this run: a deny entry that removed a tool, or the
    allow entry that let a tool through a restrictive allow list."""
    for r in res.removed:
        if r.kind == "deny" and r.origin == "config" and r.entry is not None:
            covered.add((r.scope, str(r.source)))
    alive = set(res.inventory.names) - {r.tool for r in res.removed if r.stage == 0}
    tools = {t.name: t for t in res.inventory.tools}
    for plan, trace in zip(res.plans, res.layers, strict=True):
        lp = plan.policy
        if lp is None:
            continue
        alive -= set(trace.removed)
        if lp.allow is not None and lp.allow.restrictive:
            for name in alive:
                hit = lp.allow.match(name, tools[name].plugin_id)
                if hit is not None and hit.entry.origin == "config":
                    covered.add(_entry_id(hit.entry))


def _call_rule_entries(policy: CompiledPolicy, entries: list[Entry]) -> list[Entry]:
    """The deny, ask and allow specifiers of the policy as coverage entries (allow specifiers
    already listed as allow entries are not listed twice)."""
    from .call_checks import layer_policies

    known = {str(e.source) for e in entries}
    out: dict[str, Entry] = {}
    for lp in layer_policies(policy):
        assert lp.calls is not None
        for rules in lp.calls.tools.values():
            for rule in (*rules.deny, *rules.ask, *rules.allow):
                where = str(rule.source)
                if rule.source is None or where in known or where in out:
                    continue
                source = rule.source if isinstance(rule.source, Source) else None
                out[where] = Entry(rule.tool, rule.entry, lp.scope, source, "config")
    return list(out.values())


def _record_call_coverage(decided: list[CallDecision], covered: set[str]) -> None:
    """The rules that decided a call case (every layer that decided it by a rule of its own)."""
    if not decided:
        return
    from ..explain.decisions import deciding_layers

    for decision in decided:
        for verdict in deciding_layers(decision):
            if verdict.source is not None and verdict.entry != "callDefault":
                covered.add(str(verdict.source))


def run_test_file(
    path: str | Path,
    *,
    max_contexts: int = INVARIANT_MAX_CONTEXTS,
    coverage: bool = False,
    allow_sampled: bool = False,
) -> FileResult:
    """Run one test file. An invariant checked on a sample of the matrix (more contexts than
    `max_contexts`) that finds no violation is inconclusive, a failed result, unless
    `allow_sampled` accepts it."""
    if max_contexts < 1:
        raise ValueError(f"max_contexts must be >= 1, not {max_contexts}")
    spec, locations = load_test_file(path)
    policy_path = named_policy_path(path, spec.policy, locations.value(("policy",)))
    try:
        policy = load_policy(policy_path)
    except PolicyError as exc:
        # the named file may be any policy-suffixed file of the tree: its lines are never
        # quoted from a test run (`policyctl validate` on it quotes them)
        raise PolicyError([replace(d, quote=False) for d in exc.diagnostics]) from None
    out = FileResult(str(path), policy_path, [])
    if coverage:
        out.entries = [
            e
            for scope in iter_scopes(policy)
            for lst in (*scope.allows, scope.deny)
            if lst is not None
            for e in lst.entries
            if e.origin == "config"
        ]
        out.entries = list({_entry_id(e): e for e in out.entries}.values())
        if policy.has_call_rules:
            out.entries.extend(_call_rule_entries(policy, out.entries))
    for i, case in enumerate(spec.cases):
        res = resolve(policy, case.context.to_run_context(), require_tools=False)
        decided: list[CallDecision] = []
        result = CaseResult(
            case.name, locations.value(("cases", i)), check_case(case, res, policy, decided)
        )
        out.results.append(result)
        if coverage:
            _record_coverage(res, out.covered)
            _record_call_coverage(decided, out.covered_sources)
    if spec.invariants:
        out.results.extend(_check_invariants(policy, spec, locations, max_contexts, out))
        if out.contexts_checked < out.contexts_total:
            for r in out.results:
                if r.kind == "invariant":
                    r.sample = f"{out.contexts_checked} of {out.contexts_total}"
                    r.accepted = allow_sampled
    return out


def _check_invariants(
    policy: CompiledPolicy, spec: PolicyTestFile, locations: Any, max_contexts: int, out: FileResult
) -> list[CaseResult]:
    walked = walk(policy, max_contexts)
    out.contexts_checked, out.contexts_total = len(walked.contexts), walked.matrix.total
    results = []
    for i, inv in enumerate(spec.invariants):
        src = locations.value(("invariants", i))
        if isinstance(inv, NeverInvariant):
            names = [normal_name(t, policy) for t in inv.never.tools]
            result = CaseResult(f"never: {', '.join(names)}", src, kind="invariant")
            result.failures.extend(check_never(inv, policy, walked, _trail))
            results.append(result)
        elif inv.subagent_subset_of_parent:
            result = CaseResult("subagentSubsetOfParent", src, kind="invariant")
            result.failures.extend(check_subset(inv, walked))
            results.append(result)
    return results


def policy_test_schema() -> dict[str, object]:
    schema = PolicyTestFile.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema
