"""Call layers: a run's applied layers -> the call rules of its allowed tools, layer by layer.

Each applied layer whose policy has call rules (`LayerPolicy.calls`, built at compile time)
contributes one `LayerCallRules` labelled as in the trail, holding only the tools the run
has. The inheritance layer contributes the parent's call layers (`Capture.calls`), relabelled
as the inheritance layer and restricted to the child's tools: a child never makes a call its
parent could not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..catalog.inventory import Inventory
from ..compile.layers import Layer, LayerPlan

if TYPE_CHECKING:
    from ..callrules.model import LayerCallRules


def call_layers(
    plans: Sequence[LayerPlan],
    allowed: frozenset[str],
    inventory: Inventory,
    inherited: Sequence[LayerCallRules],
) -> tuple[LayerCallRules, ...]:
    from ..callrules.model import LayerCallRules

    out: list[LayerCallRules] = []
    for plan in plans:
        policy = plan.policy
        if policy is None:
            continue
        if plan.stage is Layer.INHERITANCE:
            for layer in inherited:
                kept = {t: r for t, r in layer.tools.items() if t in allowed}
                if kept:
                    out.append(LayerCallRules(plan.label, kept, layer.scope))
            continue
        calls = policy.calls
        if calls is None:
            continue
        tools = calls.for_run(allowed, inventory)
        if tools:
            out.append(LayerCallRules(plan.label, tools, policy.scope))
    return tuple(out)


def rules_json(
    layers: Sequence[LayerCallRules], allowed: Sequence[str]
) -> dict[str, list[dict[str, Any]]]:
    """`resolve --format json`'s `callRules`: per allowed tool with call rules, every rule of
    every layer (layer, effect, entry, where it is written), in layer and decision order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for tool in allowed:
        rows: list[dict[str, Any]] = []
        for layer in layers:
            rules = layer.tools.get(tool)
            if rules is None:
                continue
            for effect, group in (("deny", rules.deny), ("ask", rules.ask)):
                rows.extend(
                    _rule_row(layer.list_of(effect), effect, r.entry, r.source) for r in group
                )
            if rules.plain_ask is not None:
                rows.append(
                    _rule_row(
                        layer.list_of("ask"),
                        "ask",
                        rules.plain_ask,
                        rules.plain_ask_source,
                        "name",
                    )
                )
            rows.extend(
                _rule_row(layer.list_of("allow"), "allow", r.entry, r.source) for r in rules.allow
            )
            if rules.allow and not rules.name_admitted:
                rows.append(
                    _rule_row(
                        layer.list_of("callDefault"),
                        rules.call_default.label,
                        "callDefault",
                        rules.call_default_source,
                        "callDefault",
                    )
                )
        if rows:
            out[tool] = rows
    return out


def _rule_row(
    layer: str, effect: str, entry: str, source: object, kind: str = "specifier"
) -> dict[str, Any]:
    return {
        "layer": layer,
        "effect": effect,
        "kind": kind,
        "entry": entry,
        "source": _source_json(source),
    }


def _source_json(source: object) -> dict[str, object] | None:
    file, line, column = (getattr(source, k, None) for k in ("file", "line", "column"))
    if file is None:
        return None
    return {"file": file, "line": line, "column": column}
