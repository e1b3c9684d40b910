"""Runs left with no tools: found (PC308) or declared (`expectEmpty`, checked by PC309).

Every matrix context is asked once per group of contexts that resolve alike (`DistinctRun`).
A run with no tools is blamed on the layer and list that removed its last tools
(`Resolution.emptied`): allow lists that left everything out, or a deny entry such as a banned
sender's `deny: ["*"]`. An operator who bans on purpose says so with `expectEmpty: true` on the
scope; validate then checks the opposite: every run that scope applies to is empty.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from ..compile.layers import LayerPolicy, spec
from ..diagnostics import Diagnostic, Source
from ..located import list_path
from ..pipeline.result import Emptied
from .matrix import Matrix
from .matrixwalk import DistinctRun

_SHOWN = 10  # places named in one message; the counts are always exact
_PLACE = ("agent=", "group=", "channel=", "account=")


@dataclass
class _Found:
    """The contexts one cause empties (or one declaration misses), with one example."""

    contexts: list[str] = field(default_factory=list)
    kept: tuple[str, ...] = ()


def empty_contexts(matrix: Matrix, runs: list[DistinctRun]) -> Iterator[Diagnostic]:
    """PC308 for every matrix context left with no tools that no scope declares empty, one
    diagnostic per cause (the list that removed the last tools); PC309 for every scope that
    declares `expectEmpty` while a run it applies to keeps tools. A run that fails closed by
    design (a scheduled run in a deleted account, PC409; a memory flush in a run without
    read and write) is not a finding."""
    if matrix.sampled:
        yield Diagnostic.make(
            "PC415",
            f"checked {len(matrix.contexts)} of {matrix.total} contexts "
            "for empty tool sets (a deterministic sample); raise --max-contexts "
            "to check them all",
        )
    empty: dict[tuple[object, ...], tuple[Emptied, _Found]] = {}
    missed: dict[Source, tuple[LayerPolicy, _Found]] = {}
    for run in runs:
        res = run.resolution
        declared = [
            p.policy
            for p in res.plans
            if p.policy is not None and p.policy.expect_empty is not None
        ]
        if res.allowed:
            for lp in declared:
                assert lp.expect_empty is not None
                found = missed.setdefault(lp.expect_empty, (lp, _Found()))[1]
                found.contexts.extend(run.labels)
                found.kept = found.kept or res.allowed
            continue
        cause = res.emptied()
        if cause is None or declared:
            continue
        if any(w.code == "PC409" for w in res.selection_notes):
            continue
        if res.context.trigger == "memory":
            # the memory flush keeps only read and write (semantics 7): a run without them
            # has nothing to flush with, by design; the fix would be to widen the policy
            continue
        # allow lists are named together (one finding per chain of them); a deny by its entry
        key = (cause.kind, cause.labels, cause.source if cause.kind == "deny" else None)
        empty.setdefault(key, (cause, _Found()))[1].contexts.extend(run.labels)
    for cause, found in empty.values():
        yield _emptied(cause, found.contexts)
    for lp, found in missed.values():
        yield _not_empty(lp, found)


def _emptied(cause: Emptied, contexts: list[str]) -> Diagnostic:
    # a sender layer empties the runs of one sender: name it with the place
    count = _count(len(contexts))
    places = _by_place(contexts, cause.kind == "deny" and spec(cause.plan.stage).per_sender)
    if cause.kind == "allow":
        return Diagnostic.make(
            "PC308",
            f"no callable tools remain in {count}, emptied by {'; '.join(cause.labels)}: {places}",
            cause.source,
            cause.key,
            "widen one of these allow lists",
        )
    if cause.source is None and cause.narrowed:
        # a built-in deny (the catalog's subagent deny) took the last tools: what the operator
        # can change is the allow lists that left only tools it denies
        first = cause.narrowed[0].policy
        allow = first.allow if first is not None else None
        return Diagnostic.make(
            "PC308",
            f"no callable tools remain in {count}, emptied by {cause.labels[0]} (layer "
            f"{int(cause.plan.stage)}, built in) after the allow lists of "
            f"{'; '.join(p.label for p in cause.narrowed)} left only tools it denies: {places}",
            allow.source if allow is not None else None,
            allow.key if allow is not None else "",
            "widen one of these allow lists",
        )
    scope = cause.plan.policy.scope if cause.plan.policy is not None else cause.labels[0]
    return Diagnostic.make(
        "PC308",
        f"no callable tools remain in {count}, emptied by deny entry "
        f'"{cause.entry}" in {cause.labels[0]} (layer {int(cause.plan.stage)}, '
        f"{spec(cause.plan.stage).name}): {places}",
        cause.source,
        cause.key,
        f"if these runs are banned on purpose, add `expectEmpty: true` to {scope}; "
        f"otherwise narrow the entry in {list_path(cause.key)}",
    )


def _not_empty(lp: LayerPolicy, found: _Found) -> Diagnostic:
    kept = ", ".join(found.kept[:8]) + (
        f" and {len(found.kept) - 8} more" if len(found.kept) > 8 else ""
    )
    return Diagnostic.make(
        "PC309",
        f"{lp.scope} declares expectEmpty, but {_count(len(found.contexts))} it applies to "
        f"keep tools ({kept}): {_by_place(found.contexts)}",
        lp.expect_empty,
        f"{lp.scope}.expectEmpty",
        f'deny every tool there (`deny: ["*"]` in {lp.scope}), or remove expectEmpty',
    )


def _count(n: int, what: str = "context") -> str:
    return f"{n} {what}{'s' * (n != 1)}"


def _by_place(contexts: list[str], by_sender: bool = False) -> str:
    """`agent=support group=telegram/T1 (6 contexts), ...`: the contexts by agent and place
    (what varies within a place, such as the owner, the trigger or the depth, is counted)."""
    places: dict[str, int] = {}
    kinds = (*_PLACE, "sender=") if by_sender else _PLACE
    for label in contexts:
        parts = [p for p in label.split() if p.startswith(kinds)]
        if not any(p.startswith(_PLACE[1:]) for p in parts):
            parts.insert(1, "(no channel)")
        place = " ".join(parts)
        places[place] = places.get(place, 0) + 1
    shown = [f"{place} ({_count(n)})" for place, n in list(places.items())[:_SHOWN]]
    more = len(places) - _SHOWN
    return ", ".join(shown) + (f", and {_count(more, 'more place')}" if more > 0 else "")
