"""A tool replaced in the registry while a run is under way (a plugin reload, an MCP reconnect,
`register(..., replace=True)`) is not the tool the run's resolution allowed: the gate checks
the registered tool's identity (name, plugin id, optional), not only its name, and refuses a
call of a tool that changed; the model is not shown its definition either. The next run
resolves against the new registry and decides the new tool on its own terms."""

from __future__ import annotations

import asyncio
from typing import Any

from policyctl import RunContext, load_policy_text
from policyctl.runtime import (
    ProviderResponse,
    Runtime,
    RuntimeTool,
    ScriptedProvider,
    ToolCall,
    ToolRegistry,
)

POLICY = (
    "catalog: openclaw\n"
    "tools:\n  profile: coding\n  alsoAllow: [lookup, group:plugins]\n  deny: [shady]\n"
)
CTX = RunContext(provider="openai", session_key="agent:main:main")


def _tool(plugin: str | None, ran: list[str], *, optional: bool = False) -> RuntimeTool:
    async def lookup(**_: Any) -> str:
        ran.append(plugin or "core")
        return f"{plugin} ran"

    return RuntimeTool(
        "lookup", "t", {"type": "object"}, lookup, plugin_id=plugin, optional=optional
    )


def _runtime(ran: list[str], responses: list[ProviderResponse] | None = None) -> Runtime:
    policy = load_policy_text(POLICY, "p.yaml")
    return Runtime(policy, ToolRegistry([_tool("orders", ran)]), ScriptedProvider(responses or []))


def test_a_tool_replaced_after_the_resolve_is_refused_by_the_gate() -> None:
    ran: list[str] = []
    rt = _runtime(ran)
    res = rt.resolve(CTX)
    gate = rt.gate(res)
    assert asyncio.run(gate.call("lookup", {})).ok
    rt.registry.register(_tool("shady", ran), replace=True)
    assert not rt.resolve(CTX).is_allowed("lookup")  # a fresh resolve refuses it
    out = asyncio.run(gate.call("lookup", {}))
    assert not out.ok and out.veto is not None and out.veto.kind == "policy"
    assert "changed since this run was resolved" in out.veto.reason
    assert ran == ["orders"]
    assert gate.check("lookup", {}) is None  # the synchronous check agrees
    # nor is its definition shown to the model for the rest of the run
    assert [d["function"]["name"] for d in rt.registry.definitions(res)] == []


def test_unregister_then_register_is_a_swap_too() -> None:
    ran: list[str] = []
    rt = _runtime(ran)
    gate = rt.gate(rt.resolve(CTX))
    rt.registry.unregister("lookup")
    rt.registry.register(_tool("shady", ran))
    assert not asyncio.run(gate.call("lookup", {})).ok
    assert ran == []


def test_a_change_of_optional_or_to_a_core_tool_is_a_swap() -> None:
    for replacement in ({"plugin": "orders", "optional": True}, {"plugin": None}):
        ran: list[str] = []
        rt = _runtime(ran)
        gate = rt.gate(rt.resolve(CTX))
        plugin = replacement["plugin"]
        assert plugin is None or isinstance(plugin, str)
        rt.registry.register(
            _tool(plugin, ran, optional=bool(replacement.get("optional"))), replace=True
        )
        assert not asyncio.run(gate.call("lookup", {})).ok, replacement
        assert ran == []


def test_the_same_tool_registered_again_still_runs() -> None:
    """An MCP reconnect that registers an equal tool is not a swap: the run goes on."""
    ran: list[str] = []
    rt = _runtime(ran)
    gate = rt.gate(rt.resolve(CTX))
    rt.registry.register(_tool("orders", ran), replace=True)
    assert asyncio.run(gate.call("lookup", {})).ok
    assert ran == ["orders"]


def test_a_turn_whose_tool_reloads_a_plugin_cannot_call_the_new_one() -> None:
    """The swap happens inside the turn (a tool call reloads the plugin); the model's next
    call of the reloaded name is refused, and the next turn resolves it afresh (denied)."""
    ran: list[str] = []
    calls = [
        ProviderResponse(tool_calls=(ToolCall("1", "reload", "{}"),)),
        ProviderResponse(tool_calls=(ToolCall("2", "lookup", "{}"),)),
        ProviderResponse(content="done"),
    ]
    rt = _runtime(ran, calls)

    async def reload(**_: Any) -> str:
        rt.registry.register(_tool("shady", ran), replace=True)
        return "reloaded"

    rt.registry.register(RuntimeTool("reload", "t", {"type": "object"}, reload, plugin_id="ops"))
    result = asyncio.run(rt.run_turn(CTX, "go"))
    assert ran == []
    refused = [m for m in result.messages if m.get("role") == "tool" and "lookup" in m["content"]]
    assert refused and "blocked" in refused[-1]["content"]


def test_a_skill_command_runs_only_the_tool_it_resolved() -> None:
    ran: list[str] = []
    rt = _runtime(ran)
    real = rt.resolve

    def resolve_then_swap(ctx: RunContext, **kw: Any) -> Any:
        res = real(ctx, **kw)
        rt.registry.register(_tool("shady", ran), replace=True)  # between resolve and call
        return res

    rt.resolve = resolve_then_swap  # type: ignore[method-assign]
    out = asyncio.run(rt.run_skill_command(CTX, "lookup", {}))
    assert not out.ok and ran == []
