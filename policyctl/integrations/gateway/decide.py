"""What a client sees and may call: upstream listings -> `server__tool` names -> the policy's
resolution for the client's run context -> the call rules' verdict on each call.

The names are policyctl's MCP names (semantics 10: `mcp_tool_name`, collisions suffixed in
the servers file's order) and the verdicts and their texts are the hook handler's
(`hosts.handler.removed` / `call_decision`), so a tool refused through the gateway is refused
with the same sentence as through a host's hook.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ...catalog.inventory import Tool
from ...context import RunContext
from ...names import mcp_tool_name
from ..hosts.handler import DENY, Decided, call_decision, removed

if TYPE_CHECKING:
    from ...compile.compiled import CompiledPolicy
    from ...pipeline.result import Resolution
    from .upstream import Upstream


class PolicyStore(Protocol):
    """What the gateway needs of `policyctl.runtime.store.PolicyStore` (hot reload with the
    last good version kept), which the command hands it: integrations never import the
    runtime. `resolve` raises (a `RuntimeError`) while no valid version was ever loaded."""

    @property
    def current(self) -> CompiledPolicy | None: ...

    def resolve(self, context: RunContext, inventory: list[Tool], **kw: Any) -> Resolution: ...

    def check(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class Exposed:
    """One upstream tool as clients know it."""

    name: str  # server__tool
    server: str
    remote: str  # the tool's name on its server
    listing: Mapping[str, Any]


def exposed_tools(upstreams: Sequence[Upstream]) -> dict[str, Exposed]:
    """Every connected upstream's tools under their policyctl names, in the servers file's
    order (a collision's `-2` goes to the later server, as for any MCP host)."""
    out: dict[str, Exposed] = {}
    for upstream in upstreams:
        for listing in upstream.tools:
            remote = listing["name"]
            name = mcp_tool_name(upstream.name, remote, out.keys())
            out[name] = Exposed(name, upstream.name, remote, listing)
    return out


def resolution(store: PolicyStore, context: RunContext, names: Iterable[str]) -> Resolution:
    """The policy's resolution for `context` over the catalog's tools and these MCP tools
    (raises `PolicyUnavailable` when no valid policy was ever loaded: nothing is granted)."""
    policy = store.current
    inventory = [] if policy is None else policy.default_tools()
    inventory.extend(Tool.mcp(n) for n in names)
    return store.resolve(context, inventory, require_tools=False)


def visible(store: PolicyStore, context: RunContext, tools: Mapping[str, Exposed]) -> list[Exposed]:
    """The tools `tools/list` shows this context: those the resolution keeps."""
    res = resolution(store, context, tools)
    allowed = set(res.allowed)
    return [t for name, t in tools.items() if name in allowed]


def decide(
    store: PolicyStore,
    context: RunContext,
    tools: Mapping[str, Exposed],
    name: str,
    arguments: Mapping[str, Any],
    level: str,
) -> Decided:
    """The verdict on one `tools/call`: unknown and removed tools are refused, the rest
    decided by the call rules."""
    if name not in tools:
        return Decided(DENY, f"policyctl: no tool {_shown(name)} is served by this gateway")
    res = resolution(store, context, tools)
    if name not in res.allowed:
        return removed(res, name, name, level)
    return call_decision(res, name, name, arguments, level)


def _shown(name: str) -> str:
    from ...explain.refusal import quote

    return f'"{quote(name)}"'
