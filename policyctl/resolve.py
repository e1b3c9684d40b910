"""Resolve: CompiledPolicy + context + inventory -> Resolution (the public entry point).

`resolve(policy, ctx, inventory)` asks the policy's `Resolver` (`pipeline.engine`), which owns
every cache; a policy's resolver is created on first use and lives as long as the policy.
Code that swaps policies (a hot reload) should hold a `Resolver` per policy instead, as
`PolicyStore` does, so caches never outlive their version.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .catalog import Catalog
from .compiled import CompiledPolicy
from .context import Capture, RunContext
from .diagnostics import Diagnostic
from .entries import Entry, build_list
from .inventory import Inventory, Tool
from .names import normalize
from .pipeline.engine import Resolver
from .pipeline.match import RuleKind, decide

if TYPE_CHECKING:
    from .callrules.model import LayerCallRules
from .pipeline.result import (
    LayerTrace,
    NoCallableToolsError,
    RemovedTool,
    Resolution,
)

__all__ = [
    "CronCap",
    "LayerTrace",
    "NoCallableToolsError",
    "RemovedTool",
    "Resolution",
    "Resolver",
    "RuleKind",
    "cap_cron_tools",
    "decide",
    "default_inventory",
    "resolve",
    "resolver_for",
]

_resolvers: weakref.WeakKeyDictionary[CompiledPolicy, Resolver] = weakref.WeakKeyDictionary()
_resolvers_lock = threading.Lock()
#: the last policy asked for and its resolver: one weak reference read on the hot path
_last: tuple[weakref.ref[CompiledPolicy], Resolver] | None = None


def resolver_for(policy: CompiledPolicy) -> Resolver:
    """The resolver of this policy (created once; dropped with the policy)."""
    global _last
    last = _last
    if last is not None and last[0]() is policy:
        return last[1]
    found = _resolvers.get(policy)
    if found is None:
        with _resolvers_lock:
            found = _resolvers.get(policy)
            if found is None:
                found = Resolver(policy, weak=True)
                _resolvers[policy] = found
    _last = (weakref.ref(policy), found)
    return found


def default_inventory(policy: CompiledPolicy) -> Inventory:
    return policy.default_inventory


def resolve(
    policy: CompiledPolicy,
    context: RunContext | None = None,
    inventory: Inventory | Iterable[Tool] | None = None,
    *,
    require_tools: bool = True,
) -> Resolution:
    """The tools this run may use, and why every other tool of the inventory is gone.

    Raises `NoCallableToolsError` when explicit allow lists leave no tools (unless
    `require_tools=False`, which `explain` uses to show such a run). Inventories with the
    same tools share their cached work, whichever object carries them.
    """
    return resolver_for(policy).resolve_in(policy, context, inventory, require_tools)


@dataclass(frozen=True, slots=True)
class CronCap:
    """A scheduled job's `toolsAllow` after the creator cap; `()` means no tools at run time."""

    tools_allow: tuple[str, ...]
    dropped: tuple[str, ...]
    warnings: tuple[Diagnostic, ...]
    #: the creator's call rules: the job never makes a call its creator could not
    calls: tuple[LayerCallRules, ...] = ()

    def capture(self) -> Capture:
        return Capture(self.tools_allow, (), "cron job toolsAllow", self.calls)


def cap_cron_tools(
    creator: Resolution, requested: Sequence[str] | None, catalog: Catalog
) -> CronCap:
    """Intersect a job's requested tools with its creating run's tools; report what is dropped."""
    have = creator.allowed
    calls = creator.call_layers
    if requested is None:
        return CronCap(have, (), (), calls)
    wanted = [Entry(normalize(r, catalog.aliases), r, "toolsAllow", None) for r in requested]
    wanted = [e for e in wanted if e.text]
    if not wanted or not have:
        dropped = tuple(e.text for e in wanted)
        return CronCap((), dropped, _dropped_warning(dropped), calls)
    lst = build_list("toolsAllow", None, wanted, catalog.groups, catalog.covers)
    kept = tuple(t for t in have if lst.match(t) is not None)
    matched = {
        e.text
        for e in wanted
        if any(build_list("", None, [e], catalog.groups, catalog.covers).match(t) for t in kept)
    }
    dropped = tuple(e.text for e in wanted if e.text not in matched)
    return CronCap(kept, dropped, _dropped_warning(dropped), calls)


def _dropped_warning(dropped: Sequence[str]) -> tuple[Diagnostic, ...]:
    if not dropped:
        return ()
    return (
        Diagnostic.make(
            "PC407",
            "scheduled job asked for tools its creator does not have: " + ", ".join(dropped),
        ),
    )
