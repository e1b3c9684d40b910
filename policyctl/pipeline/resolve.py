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

from ..catalog.inventory import Inventory, Tool
from ..catalog.model import Catalog
from ..compile.compiled import CompiledPolicy
from ..compile.entries import Entry, build_list
from ..context import Capture, RunContext
from ..diagnostics import Diagnostic
from ..names import normalize
from .engine import Resolver
from .result import Resolution
from .warnings import unknown_context_values

if TYPE_CHECKING:
    from ..callrules.model import LayerCallRules

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


#: the logger `log_context_warnings` writes to (logging is imported there: a `resolve`
#: command never logs, and importing logging costs every start)
LOGGER = "policyctl.runtime"
_LOGGED_MAX = 256  # identical warnings are logged once (the newest 256 are remembered)
_logged: dict[tuple[int, str], None] = {}


def context_warnings(policy: CompiledPolicy, context: RunContext) -> tuple[Diagnostic, ...]:
    """The warnings for a caller-supplied context."""
    return unknown_context_values(policy, resolve(policy, context, require_tools=False).context)


def log_context_warnings(policy: CompiledPolicy, context: RunContext) -> None:
    """Log each warning for this run on the runtime's logger, once per policy and message."""
    import logging

    log = logging.getLogger(LOGGER)
    for warning in context_warnings(policy, context):
        key = (id(policy), warning.message)
        if key in _logged:
            continue
        if len(_logged) >= _LOGGED_MAX:
            del _logged[next(iter(_logged))]
        _logged[key] = None
        log.warning("%s %s", warning.code, warning.message)
