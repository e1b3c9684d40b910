"""A run's call rules for runtime tests: deciders built from the real call-rule core."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from callrules.callrules_helpers import tool_rules

from policyctl import load_policy_text, resolve
from policyctl.callrules import (
    CallDecision,
    CallEnvironment,
    LayerCallRules,
    Roots,
    ToolCallRules,
    decide_call,
    environment_for,
)
from policyctl.catalog.load import builtin_catalog
from policyctl.runtime import CallGate, RuntimeTool, ToolRegistry


class RulesDecider:
    """`decide_call` over fixed layers, as a run's Resolution answers it."""

    def __init__(self, layers: Sequence[LayerCallRules], env: CallEnvironment) -> None:
        self.layers = tuple(layers)
        self.env = env
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def decide_call(self, tool: str, args: Mapping[str, Any]) -> CallDecision:
        self.calls.append((tool, dict(args)))
        return decide_call(self.layers, tool, args, self.env)


def environment(workspace: Path | None = None, home: Path | None = None) -> CallEnvironment:
    roots = Roots(
        None if workspace is None else str(workspace), None if home is None else str(home)
    )
    return environment_for(builtin_catalog("nanobot"), roots)


def rules(tool: str, env: CallEnvironment, **lists: Any) -> ToolCallRules:
    """`rules("exec", env, deny=[...], ask=[...], allow=[...], default="ask", name=True)`."""
    return tool_rules(tool, env, lists, column=5)


def decider(env: CallEnvironment, **by_layer: Sequence[ToolCallRules]) -> RulesDecider:
    """Layers in keyword order: `decider(env, agent=[rules(...)], sandbox=[...])`."""
    layers = [LayerCallRules(label, {r.tool: r for r in rs}) for label, rs in by_layer.items()]
    return RulesDecider(layers, env)


def gate_with(tools: list[RuntimeTool], call_decider: RulesDecider, **kw: Any) -> CallGate:
    policy = load_policy_text("catalog: nanobot\n")
    registry = ToolRegistry(tools)
    res = resolve(policy, None, registry.inventory(policy.catalog))
    return CallGate(res, registry, decider=call_decider, **kw)


def recording_tool(name: str, calls: list[dict[str, Any]], *keys: str) -> RuntimeTool:
    async def run(**params: Any) -> str:
        calls.append(params)
        return "ran"

    schema = {
        "type": "object",
        "properties": {k: {"type": "string"} for k in keys},
        "additionalProperties": False,
    }
    return RuntimeTool(name, name, schema, run)
