"""Allow entries that never take effect: an earlier layer always removes their tools (PC432).

Tools are only ever removed, so an allow entry at layer N matters only in runs where one of
its tools is still there when layer N reads the list. This check asks every context of the
matrix (the runs the policy can tell apart): an entry whose tools are gone before its layer in
every run where its list applies is reported, with the layer that removed them and the fix
`explain` gives for that removal. Typical cases: `profile: messaging` next to
`allow: [message, read, web_search]` (the profile drops `read` first), and `alsoAllow` in a
sender entry, which cannot widen past the profile (only the profile layer reads alsoAllow).

Construction filters (owner-only, optional plugins, provider-gated tools) are not counted as
"always removed": they depend on who runs, which plugins an allow names and the provider.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ..catalog.inventory import Inventory
from ..compile.compiled import CompiledPolicy, SenderTable, ToolsScope
from ..compile.entries import Entry, EntryList, build_list
from ..compile.layers import LayerPolicy
from ..diagnostics import Diagnostic
from ..explain.tool import blockers_of, fix_for
from ..located import list_path
from ..pipeline.match import decide
from ..pipeline.result import Resolution
from .matrix import Matrix
from .matrixwalk import DistinctRun


def _scope_policies(scope: ToolsScope) -> Iterator[LayerPolicy | None]:
    yield scope.policy
    yield from (ps.policy for ps in scope.by_provider.values())
    yield from _sender_policies(scope.senders)
    yield scope.subagents


def _sender_policies(table: SenderTable | None) -> Iterator[LayerPolicy | None]:
    yield from (table.policies.values() if table is not None else ())


def _config_allow_lists(policy: CompiledPolicy) -> Iterator[EntryList]:
    """Every configured allow list a layer reads as is (profile and sandbox lists are built
    from several sources, and are left out)."""
    found: list[LayerPolicy | None] = [*_scope_policies(policy.global_tools)]
    if policy.defaults_tools is not None:
        found.extend(_scope_policies(policy.defaults_tools))
    for agent in policy.agents.values():
        if agent.tools is not None:
            found.extend(_scope_policies(agent.tools))
    for channel in policy.channels.values():
        maps = [channel.groups, *channel.accounts.values()]
        for groups in maps:
            for group in (groups or {}).values():
                found.append(group.tools)
                found.extend(_sender_policies(group.senders))
    for lp in found:
        if lp is not None and lp.allow is not None and not lp.allow.empty:
            yield lp.allow


@dataclass
class _EntryState:
    entry: Entry
    tools: tuple[str, ...]
    also_only: bool
    seen: bool = False
    reachable: bool = False
    #: one run where the entry's first tool is gone before its layer, and that layer
    example: tuple[Resolution, int] | None = None


def _also_only(lst: EntryList) -> bool:
    """An allow list that is `["*", ...alsoAllow]`: alsoAllow written outside the profile."""
    star = lst.wildcard
    return star is not None and star.entry.origin == "catalog"


def _list_id(lst: EntryList) -> tuple[str, str]:
    """Which configured list a layer applies, whatever object the resolver built for it: its
    key path and where it is written."""
    return (lst.key, str(lst.source))


def _states(policy: CompiledPolicy, inv: Inventory) -> dict[tuple[str, str], list[_EntryState]]:
    cat = policy.catalog
    out: dict[tuple[str, str], list[_EntryState]] = {}
    for lst in _config_allow_lists(policy):
        if _list_id(lst) in out:
            continue
        also_only = _also_only(lst)
        if lst.wildcard is not None and not also_only:
            continue  # an explicit "*" allows everything: its other entries never decide
        rows = []
        for entry in lst.entries:
            if entry.origin != "config" or entry.text == "*":
                continue
            alone = build_list(lst.key, lst.source, [entry], cat.groups, cat.covers)
            named = tuple(t.name for t in inv.tools if alone.match(t.name, t.plugin_id))
            if named:
                rows.append(_EntryState(entry, named, also_only))
        out[_list_id(lst)] = rows
    return out


def unreachable_entries(
    policy: CompiledPolicy, inventory: Inventory, matrix: Matrix, runs: list[DistinctRun]
) -> Iterator[Diagnostic]:
    """`runs`: the matrix's contexts grouped by their layer plans (`distinct_runs`); a list is
    judged once per distinct run, and once per set of earlier policies within them."""
    if matrix.sampled:
        return  # "in every run" cannot be claimed from a sample
    states = _states(policy, inventory)
    if not any(states.values()):
        return
    cat = policy.catalog
    plugin_of = {t.name: t.plugin_id for t in inventory.tools}
    # Runs share their layer policies (plans are memoised): a list behind the same earlier
    # policies is judged once. The key holds ids; the runs keep the policies alive.
    judged: set[tuple[object, ...]] = set()
    for run in runs:
        plans = run.resolution.plans
        for i, plan in enumerate(plans):
            lp = plan.policy
            allow = lp.allow if lp is not None else None
            list_id = _list_id(allow) if allow is not None else None
            rows = states.get(list_id) if list_id is not None else None
            if not rows:
                continue
            earlier = [p.policy for p in plans[:i] if p.policy is not None]
            key = (list_id, *(id(p) for p in earlier))
            for row in rows:
                row.seen = True
            if key in judged:
                continue
            judged.add(key)
            for row in rows:
                if row.reachable:
                    continue
                if any(
                    all(decide(t, plugin_of[t], p, cat) is None for p in earlier) for t in row.tools
                ):
                    row.reachable = True
                elif row.example is None:
                    row.example = (run.resolution, plan.stage)
    for rows in states.values():
        for row in rows:
            if row.seen and not row.reachable and row.example is not None:
                yield _diagnostic(row, policy)


def _diagnostic(row: _EntryState, policy: CompiledPolicy) -> Diagnostic:
    entry = row.entry
    assert row.example is not None
    res, stage = row.example
    tool = row.tools[0]
    # every earlier layer that removes the tool must change, or the entry still never matters
    blockers = [b for b in blockers_of(res, tool, policy) if 0 < b.stage < stage]
    first = blockers[0]
    tools = ", ".join(row.tools[:6]) + (" ..." if len(row.tools) > 6 else "")
    by = f"layer {first.stage} ({first.label})"
    fixes = list(dict.fromkeys(fix_for(b, policy, res) for b in blockers))
    fix = fixes[0] if len(fixes) == 1 else "; ".join(f"({i}) {f}" for i, f in enumerate(fixes, 1))
    key = list_path(entry.key)
    if row.also_only:
        message = (
            f'alsoAllow "{entry.raw.strip()}" in {key} cannot widen past {by}: only the '
            f"profile layer reads alsoAllow, and {tools} is removed before layer {stage} in "
            "every run"
        )
        fix = f"{fix}; then deny it in the senders that should not get it"
    else:
        message = (
            f'"{entry.raw.strip()}" in {key} never takes effect: {by} removes {tools} in '
            "every run before this list is read"
        )
        fix = f"{fix}; or remove this entry"
    return Diagnostic.make("PC432", message, entry.source, entry.key, fix)
