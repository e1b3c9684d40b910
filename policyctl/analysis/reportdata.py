"""What the HTML report shows, as plain JSON-ready data: the context matrix of a policy (or of
two, for a change), each context's structured fields, and per distinct run the cells, the
trail and the fixes.

Thousands of contexts share a handful of distinct runs (`matrixwalk.run_key`): each context
row names its run by index, and each run is resolved and explained once, so a 30,000-context
report stays a few megabytes. Nothing here renders: `policyctl.htmlreport` does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..compile.layers import LAYERS
from ..explain.tool import decide_tool
from ..pipeline.resolve import resolver_for
from .matrix import (
    SENDER_KINDS,
    Dimensions,
    MatrixContext,
    baseline_cell,
    main_session_key,
    matrix_context,
)
from .matrixwalk import gated_tools, run_key

if TYPE_CHECKING:
    from ..compile.compiled import CompiledPolicy
    from ..pipeline.context import Facts
    from ..pipeline.result import Resolution

#: contexts the report shows before it samples (deterministically, like `matrix`)
DEFAULT_MAX_CONTEXTS = 50_000
#: the structured fields of a context row, in order (`matrix --format json` uses the same)
FIELDS = (
    "label",
    "agent",
    "channel",
    "account",
    "group",
    "sender",
    "owner",
    "sandboxed",
    "depth",
    "trigger",
    "provider",
    "model",
)
#: an allowed tool whose calls call rules decide in this run
WITH_CALL_RULES = "ok+"


def cell_code(res: Resolution, tool: str, ruled: set[str]) -> str:
    """`ok`, `ok+` (call rules decide its calls), `Lk` (removed at layer k), `C`
    (construction filter) or `-` (not in this run's inventory)."""
    if res.is_allowed(tool):
        return WITH_CALL_RULES if tool in ruled else "ok"
    removal = res.removal(tool)
    return "-" if removal is None else ("C" if removal.stage == 0 else f"L{removal.stage}")


def ruled_tools(res: Resolution) -> set[str]:
    """The allowed tools some applied layer has call rules for."""
    return {t for layer in res.call_layers for t in layer.tools if res.is_allowed(t)}


def context_fields(cell: MatrixContext, sandboxed: bool | None = None) -> dict[str, Any]:
    """A context as structured fields; `sandboxed` is what the run resolves to (it depends
    on the agent's sandbox mode and the session), so the caller passes it from the run."""
    c = cell.context
    sender = c.sender
    keys = [
        f"{kind}:{value}"
        for kind, value in zip(
            SENDER_KINDS, (sender.id, sender.e164, sender.username, sender.name), strict=True
        )
        if value is not None
    ]
    return {
        "label": cell.label,
        "agent": c.agent,
        "channel": c.channel,
        "account": c.account,
        "group": c.group,
        "sender": ",".join(keys) or None,
        "owner": c.is_owner,
        "sandboxed": sandboxed,
        "depth": c.subagent_depth,
        "trigger": c.trigger,
        "provider": c.provider,
        "model": c.model,
    }


def _source(source: object) -> str | None:
    return None if source is None else str(source)


class Interner:
    """Equal values stored once: thousands of runs share a few hundred layer traces, removal
    explanations and rows of cells, so each run is a handful of indexes into these tables."""

    def __init__(self) -> None:
        self.tables: dict[str, list[Any]] = {}
        self._index: dict[str, dict[str, int]] = {}

    def add(self, table: str, value: Any) -> int:
        key = json.dumps(value, sort_keys=True, separators=(",", ":"))
        index = self._index.setdefault(table, {})
        found = index.get(key)
        if found is None:
            rows = self.tables.setdefault(table, [])
            found = index[key] = len(rows)
            rows.append(value)
        return found


def _removal(policy: CompiledPolicy, res: Resolution, tool: str) -> dict[str, Any]:
    decision = decide_tool(res, tool, policy)
    return {
        "blockers": [
            {
                "stage": b.stage,
                "label": b.label,
                "kind": b.kind,
                "entry": b.entry,
                "expandedFrom": b.expanded_from,
                "writtenAs": b.written_as,
                "scope": b.scope,
                "source": _source(b.source),
            }
            for b in decision.blockers
        ],
        "fixes": list(decision.fixes),
    }


def _calls(res: Resolution, tools: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    calls: dict[str, list[dict[str, Any]]] = {}
    wanted = set(tools)
    for layer in res.call_layers:
        for tool, rules in layer.tools.items():
            if tool not in wanted or not res.is_allowed(tool):
                continue
            calls.setdefault(tool, []).append(
                {
                    "layer": layer.label,
                    "scope": layer.scope,
                    "deny": [[r.entry, _source(r.source)] for r in rules.deny],
                    "ask": [[r.entry, _source(r.source)] for r in rules.ask],
                    "allow": [[r.entry, _source(r.source)] for r in rules.allow],
                    "otherwise": "allow"
                    if rules.name_admitted
                    else rules.call_default.name.lower(),
                }
            )
    return calls


class RemovalMemo:
    """Each distinct removal question explained once, as its index in the interned
    `removal` table. The blockers and fixes of a tool depend on the policies the run's
    layers apply (shared objects, so identity is equality, as in `matrixwalk.run_key`), its
    first removal and the agent, sandbox mode and provider the fix texts name. Ten thousand
    runs ask a few hundred distinct questions; the key is a few small values per run and
    tool, so the memo stays small when nearly every sampled run is distinct."""

    def __init__(self, policy: CompiledPolicy, shared: Interner) -> None:
        self.policy, self.shared = policy, shared
        self._runs: dict[object, int] = {}  # the part of a key that depends on the run only
        self._keep: list[object] = []
        self._found: dict[tuple[object, ...], int] = {}

    def run_id(self, res: Resolution) -> int:
        ctx = res.context
        key = (
            tuple((p.stage, id(p.policy), p.skip_reason, p.label, p.detail) for p in res.plans),
            ctx.agent,
            ctx.sandbox_mode,
            ctx.sandboxed,
            ctx.provider,
        )
        found = self._runs.get(key)
        if found is None:
            found = self._runs[key] = len(self._runs)
            self._keep.append(res.plans)  # the ids in the key stay theirs while the memo lives
        return found

    def index(self, res: Resolution, run: int, tool: str) -> int:
        key = (run, tool, res.removal(tool))
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = self.shared.add("removal", _removal(self.policy, res, tool))
        return found


def _run_data(
    policy: CompiledPolicy,
    res: Resolution,
    tools: Sequence[str],
    shared: Interner,
    memo: RemovalMemo,
) -> list[int]:
    """A run as four indexes: its cells, its trail's layers, its removals (one per tool, or
    null for a tool it keeps) and its call rules."""
    ruled = ruled_tools(res) if policy.has_call_rules else set()
    layers = [
        shared.add(
            "layer",
            {
                "stage": t.stage,
                "label": t.label,
                "applied": t.applied,
                "skip": t.skip_reason,
                "removed": list(t.removed),
                "detail": t.detail,
            },
        )
        for t in res.layers
    ]
    run = memo.run_id(res)
    removals = [
        None if res.is_allowed(tool) or res.removal(tool) is None else memo.index(res, run, tool)
        for tool in tools
    ]
    return [
        shared.add("cellSet", [cell_code(res, t, ruled) for t in tools]),
        shared.add("layerSet", layers),
        shared.add("removalSet", removals),
        shared.add("callSet", _calls(res, tools)),
    ]


class RunTable:
    """One policy's distinct runs over a list of contexts: each context's run index."""

    def __init__(self, policy: CompiledPolicy, tools: Sequence[str], shared: Interner) -> None:
        self.policy = policy
        self.tools = list(tools)
        self.shared = shared
        self._resolver = resolver_for(policy)
        self._gated = gated_tools(policy)
        self._index: dict[tuple[object, ...], int] = {}
        self._keep: list[object] = []  # the plans a key names stay alive (see matrixwalk)
        self._memo = RemovalMemo(policy, shared)
        self.runs: list[list[int]] = []

    def resolve(self, cell: MatrixContext) -> Resolution:
        return self._resolver.resolve_in(self.policy, cell.context, None, False)

    def add(self, cell: MatrixContext) -> tuple[int, Facts]:
        facts, plans = self._resolver.run_plan(cell.context)
        self._keep.append(plans)
        key = run_key(facts, plans, self._gated)
        found = self._index.get(key)
        if found is None:
            found = self._index[key] = len(self.runs)
            self.runs.append(
                _run_data(self.policy, self.resolve(cell), self.tools, self.shared, self._memo)
            )
        return found, facts


def _tools(policy: CompiledPolicy) -> list[dict[str, str]]:
    sections = {t.id: t.section for t in policy.catalog.tools}
    return [
        {"name": t.name, "section": sections.get(t.name) or f"plugin {t.plugin_id or ''}".strip()}
        for t in policy.default_inventory.tools
    ]


def _contexts(dims: Sequence[Dimensions], max_contexts: int) -> tuple[list[MatrixContext], int]:
    """The union of the matrices' contexts (one for a report, two for a change), each
    sampled beyond `max_contexts`, in order; and the size of the larger product."""
    seen: dict[str, MatrixContext] = {}
    for d in dims:
        for i in d.indexes(max_contexts):
            cell = d.context_at(i)
            seen.setdefault(cell.label, cell)
    return list(seen.values()), max(d.total for d in dims)


def _legend() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"code": "ok", "text": "allowed"},
        {"code": WITH_CALL_RULES, "text": "allowed; call rules decide its calls"},
    ]
    out += [
        {"code": f"L{s.layer}", "text": f"removed at layer {s.layer}: {s.name}"} for s in LAYERS
    ]
    out.append({"code": "C", "text": "removed by a construction filter (owner-only, provider)"})
    out.append({"code": "-", "text": "not in this run's inventory"})
    return out


def report_data(
    policy: CompiledPolicy,
    name: str,
    *,
    old: CompiledPolicy | None = None,
    old_name: str | None = None,
    max_contexts: int = DEFAULT_MAX_CONTEXTS,
) -> dict[str, Any]:
    """The report's data; with `old`, a change from `old` to `policy`: both over the union
    of their contexts, each row naming its run in both, plus the call-rule changes."""
    main_keys = {main_session_key(policy)} | ({main_session_key(old)} if old else set())
    dims = [Dimensions(policy, main_keys=main_keys)]
    if old is not None:
        dims.append(Dimensions(old, main_keys=main_keys))
    cells, total = _contexts(dims, max_contexts)
    tools = _tools(policy)
    names = [t["name"] for t in tools]
    if old is not None:  # a tool only the old policy's inventory has is a column too
        names += [t.name for t in old.default_inventory.tools if t.name not in names]
        tools += [
            {"name": n, "section": "(removed from the inventory)"} for n in names[len(tools) :]
        ]
    shared = Interner()
    new_runs = RunTable(policy, names, shared)
    old_runs = RunTable(old, names, shared) if old is not None else None
    rows: list[list[Any]] = []
    for cell in cells:
        run, facts = new_runs.add(cell)
        fields = context_fields(cell, facts.sandboxed)
        row = [fields[f] for f in FIELDS] + [run]
        if old_runs is not None:
            row.append(old_runs.add(cell)[0])
        rows.append(row)
    # each agent's baseline run (no provider, no channel, the main session, an anonymous
    # sender, not the owner, a user turn): what "only contexts where something differs"
    # compares with, present even when the sample left its row out
    baselines = [
        [agent, new_runs.add(matrix_context(baseline_cell(agent)))[0]] for agent in dims[0].agents
    ]
    data: dict[str, Any] = {
        "format": 1,
        "policy": name,
        "total": total,
        "sampled": any(d.total > max_contexts for d in dims),
        "fields": list(FIELDS),
        "tools": tools,
        "legend": _legend(),
        "contexts": rows,
        "runs": new_runs.runs,
        "baselines": baselines,
        "tables": shared.tables,
    }
    if old is not None and old_runs is not None:
        from .call_diff import RuleDiff

        data["old"] = old_name
        data["oldRuns"] = old_runs.runs
        rule_diff = RuleDiff()
        for cell in cells:
            before, after = old_runs.resolve(cell), new_runs.resolve(cell)
            rule_diff.add(cell.label, before, after)
        data["callRuleChanges"] = [c.to_json() for c in rule_diff.changes()]
    return data
