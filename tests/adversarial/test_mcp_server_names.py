"""An MCP server's name can never make `<server>__` ambiguous: `ops__*` must mean server ops's
tools only, and two servers must never produce the same tool name (semantics 10)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from policyctl.names import mcp_server_problem, mcp_tool_name
from policyctl.runtime.mcp import mcp_tool, mcp_tools


async def _call(name: str, arguments: dict[str, Any]) -> Any:
    return {"content": []}


@pytest.mark.parametrize("server", ["ops__admin", "a__b", "ops_", " ops__x ", "o p__"])
def test_the_runtime_refuses_an_ambiguous_server(server: str) -> None:
    with pytest.raises(ValueError, match="PC322"):
        mcp_tools(server, [{"name": "status"}], _call)
    with pytest.raises(ValueError, match="PC322"):
        mcp_tool(server, {"name": "status"}, _call)


@pytest.mark.parametrize("server", ["ops", "ops-admin", "ops_admin", "github", "é"])
def test_plain_server_names_are_kept(server: str) -> None:
    assert mcp_server_problem(server) is None
    assert mcp_tools(server, [{"name": "status"}], _call)


servers = st.text(alphabet="ab_-", min_size=1, max_size=6)
tools = st.text(alphabet="ab_-", min_size=1, max_size=6)


@settings(max_examples=500)
@given(servers, tools, servers, tools)
@example("ops__admin", "drop", "ops", "status")
@example("a_", "x", "a", "b")
@example("a__b", "c", "a", "b__c")
def test_no_other_servers_glob_matches_a_servers_tools(
    server: str, tool: str, other: str, other_tool: str
) -> None:
    # whenever both servers are accepted, `<other>__*` matches only other's own tools, and
    # tools of two different servers never share a name
    if mcp_server_problem(server) or mcp_server_problem(other):
        return
    name = mcp_tool_name(server, tool)
    own_part = mcp_tool_name(server, "t")[: -len("__t")]
    other_part = mcp_tool_name(other, "t")[: -len("__t")]
    if own_part != other_part:
        assert not name.startswith(other_part + "__"), (server, tool, other)
        assert name != mcp_tool_name(other, other_tool)


async def _nothing(name: str, arguments: dict[str, Any]) -> Any:
    return {"content": []}


@pytest.mark.parametrize(
    "first, second",
    [("GitHub", "github"), ("ops.admin", "ops-admin"), ("ops admin", "ops-admin")],
)
def test_two_servers_with_one_prefix_cannot_both_connect(first: str, second: str) -> None:
    from policyctl.runtime.registry import ToolRegistry

    registry = ToolRegistry()
    for t in mcp_tools(first, [{"name": "select"}], _nothing):
        registry.register(t)
    with pytest.raises(ValueError, match="PC322"):
        for t in mcp_tools(second, [{"name": "drop_table"}], _nothing):
            registry.register(t)
    # the same server reconnecting is fine; once its tools are gone the prefix is free
    (again,) = mcp_tools(first, [{"name": "select"}], _nothing)
    registry.register(again, replace=True)
    registry.unregister(again.name)
    for t in mcp_tools(second, [{"name": "drop_table"}], _nothing):
        registry.register(t)
    assert registry.get(mcp_tools(second, [{"name": "drop_table"}], _nothing)[0].name)


def test_a_server_name_longer_than_the_cut_is_refused() -> None:
    # `customer-database-production-ro` and `-rw` were both cut to `...-production-r`
    with pytest.raises(ValueError, match="PC322"):
        mcp_tools("customer-database-production-ro", [{"name": "select"}], _nothing)


def test_a_prefix_is_freed_when_its_last_tool_is_replaced_by_a_plain_tool() -> None:
    from policyctl.runtime.registry import ToolRegistry
    from policyctl.runtime.tools import RuntimeTool

    registry = ToolRegistry()
    (first,) = mcp_tools("GitHub", [{"name": "select"}], _nothing)
    registry.register(first)
    plain = RuntimeTool(first.name, "", {"type": "object"}, _nothing, plugin_id="ops")
    registry.register(plain, replace=True)  # the MCP server's last tool is gone
    for t in mcp_tools("github", [{"name": "drop_table"}], _nothing):
        registry.register(t)
