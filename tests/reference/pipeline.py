"""A whole run: construction filters (semantics 7.9), then the eleven layers in order, each
applied to what is still in the list (section 7), then the capture a child inherits (7.8)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from policyctl import Capture, RunContext, Tool
from policyctl.catalog.model import Catalog
from policyctl.located import list_path

from .facts import Facts, facts_of
from .layers import layer_policies
from .matching import Named, Policy, normal, verdict


@dataclass(frozen=True)
class Outcome:
    allowed: tuple[str, ...]
    #: tool -> (stage, rule kind); stage 0 is construction
    removed: dict[str, tuple[int, str]]
    #: tool -> the label of the layer that removed it (layers 1 to 11; semantics 7's table)
    labels: dict[str, str]
    facts: Facts
    restrictive: bool

    def capture(self, inventory: Sequence[str]) -> Capture:
        """A run hands down its tools as literal names, restricted or not: semantics 7.8's
        invariant (a child's tools are a subset of its parent's) wins over "an unrestricted
        parent does not cap its child", which would let a tool registered after the parent
        resolved reach the child (policyctl's decision, README "Inheritance")."""
        return Capture(self.allowed)


def engine_labels(res: Any) -> dict[str, str]:
    """The engine's removals by the label of the layer that removed them, as `Outcome.labels`
    has them. A removal by a deny entry is labelled with the list that entry is written in
    (issue 20: `tools.toolsBySender["id:1"].deny`, not the layer's `tools.toolsBySender`):
    asserted here against the entry's own key, so the layer is compared to the specification
    and the list to where the entry was written."""
    out: dict[str, str] = {}
    for r in res.removed:
        if r.stage == 0:
            continue
        if r.kind == "deny":
            assert r.label == list_path(r.scope), (r.tool, r.label, r.scope)
        out[r.tool] = res.layers[r.stage - 1].label
    return out


def _names_optional(catalog: Catalog, policies: list[Policy | None], tool: Named) -> bool:
    """An optional plugin tool exists only if some applied allow list names it, its plugin
    id or `group:plugins` (literally: a glob does not count)."""
    words = {tool.name, "group:plugins"}
    if tool.plugin_id:
        words.add(tool.plugin_id.strip().lower())
    return any(p is not None and p.allow and words & set(p.allow) for p in policies)


def run(
    catalog: Catalog,
    doc: dict[str, Any],
    ctx: RunContext,
    inventory: Sequence[Tool],
    quirks: frozenset[str] = frozenset(),
) -> Outcome:
    """`quirks` names known engine bugs (bugs.py) to reproduce, so that a property test can
    still compare everything else; the bug's own test runs without them."""
    facts = facts_of(doc, ctx, quirks)
    policies = layer_policies(catalog, doc, facts, ctx.parent, quirks)
    provider = None
    if facts.provider:
        p = facts.provider.strip().lower()
        provider = catalog.provider_aliases.get(p, p)
    allowed: list[str] = []
    removed: dict[str, tuple[int, str]] = {}
    labels: dict[str, str] = {}
    owner_only = {normal(catalog, n) for n in catalog.owner_only}
    for item in inventory:
        tool = Named(normal(catalog, item.name), item.plugin_id)
        core = catalog.by_id.get(tool.name) if item.plugin_id is None else None
        if tool.name in owner_only and not facts.is_owner:
            removed[tool.name] = (0, "owner-only")
            continue
        if item.optional and not _names_optional(catalog, policies, tool):
            removed[tool.name] = (0, "optional-plugin")
            continue
        if core is not None and core.providers is not None and provider not in core.providers:
            removed[tool.name] = (0, "catalog")
            continue
        for stage, policy in enumerate(policies, start=1):
            if policy is None:
                continue

            kind = verdict(catalog, policy, tool)
            if kind is not None:
                removed[tool.name] = (stage, kind)
                labels[tool.name] = policy.label
                break
        else:
            allowed.append(tool.name)
    restrictive = any(p is not None and p.restrictive() for p in policies)
    return Outcome(tuple(allowed), removed, labels, facts, restrictive)
