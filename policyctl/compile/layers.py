"""The eleven layers (semantics 7): one enum, one ordered table, the policy a layer applies and
one plan type: the vocabulary compile writes and resolve reads.

Every other module names a layer by `Layer`, never by a bare number, and reads its label and
name from `LAYERS`, never from parallel tuples.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING

from ..diagnostics import Source
from .entries import EntryList

if TYPE_CHECKING:
    from .calls import ScopeCalls


class Layer(IntEnum):
    """A layer's number is its place in the pipeline; 0 is construction, before layer 1."""

    CONSTRUCTION = 0
    PROFILE = 1
    PROVIDER_PROFILE = 2
    GLOBAL = 3
    GLOBAL_BY_PROVIDER = 4
    AGENT = 5
    AGENT_BY_PROVIDER = 6
    GROUP = 7
    SENDER = 8
    SANDBOX = 9
    SUBAGENT = 10
    INHERITANCE = 11


@dataclass(frozen=True, slots=True)
class LayerSpec:
    layer: Layer
    #: what the trail calls the layer (`"global by provider"`)
    name: str
    #: OpenClaw's label when the layer is skipped (an applied layer carries its policy's label)
    label: str
    #: decided per sender: the group's sender rules (7) and `toolsBySender` (8)
    per_sender: bool


#: The pipeline, in order. Layer N is `LAYERS[N - 1]`.
LAYERS: tuple[LayerSpec, ...] = (
    LayerSpec(Layer.PROFILE, "profile", "tools.profile", False),
    LayerSpec(Layer.PROVIDER_PROFILE, "provider profile", "tools.byProvider.profile", False),
    LayerSpec(Layer.GLOBAL, "global", "tools.allow", False),
    LayerSpec(Layer.GLOBAL_BY_PROVIDER, "global by provider", "tools.byProvider.allow", False),
    LayerSpec(Layer.AGENT, "agent", "agents.<id>.tools.allow", False),
    LayerSpec(
        Layer.AGENT_BY_PROVIDER, "agent by provider", "agents.<id>.tools.byProvider.allow", False
    ),
    LayerSpec(Layer.GROUP, "group", "group tools.allow", True),
    LayerSpec(Layer.SENDER, "sender", "tools.toolsBySender", True),
    LayerSpec(Layer.SANDBOX, "sandbox", "sandbox tools.allow", False),
    LayerSpec(Layer.SUBAGENT, "subagent", "subagent tools.allow", False),
    LayerSpec(Layer.INHERITANCE, "inheritance", "inherited tools", False),
)
assert [s.layer for s in LAYERS] == list(Layer)[1:]

PER_SENDER: tuple[Layer, ...] = tuple(s.layer for s in LAYERS if s.per_sender)


def spec(layer: Layer) -> LayerSpec:
    return LAYERS[layer - 1]


@dataclass(frozen=True, slots=True)
class LayerPolicy:
    """One policy a layer may apply: `{allow?, deny?}` with its label and config scope."""

    label: str
    scope: str
    allow: EntryList | None = None
    deny: EntryList | None = None
    #: catalog grants (write -> apply_patch) apply to configured lists, never to an inherited
    #: list of tool names: a grant there would let a child exceed its parent.
    grants: bool = True
    #: the call rules this policy applies (`tool(specifier)` entries, `ask`, `callDefault`),
    #: per tool; None when it has none
    calls: ScopeCalls | None = None
    #: where `expectEmpty: true` declares that the runs this policy applies to have no tools
    expect_empty: Source | None = None

    @property
    def restrictive(self) -> bool:
        return self.allow is not None and self.allow.restrictive


@dataclass(frozen=True, slots=True)
class LayerPlan:
    """What one layer does for one run: apply `policy`, or skip for `skip_reason`.

    `detail` says which of several candidate rules was chosen and which were passed over
    (the group layer's first-hit precedence), so the trail never hides a shadowed rule."""

    stage: Layer
    policy: LayerPolicy | None
    skip_reason: str | None
    label: str
    detail: str | None = None


def skipped(layer: Layer, reason: str, detail: str | None = None) -> LayerPlan:
    return LayerPlan(layer, None, reason, spec(layer).label, detail)


def applied(layer: Layer, policy: LayerPolicy, detail: str | None = None) -> LayerPlan:
    return LayerPlan(layer, policy, None, policy.label, detail)
