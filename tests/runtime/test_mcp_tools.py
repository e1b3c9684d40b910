"""MCP tools: listings become checked runtime tools; results become bounded text."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from policyctl import load_policy_text, resolve
from policyctl.runtime import CallGate, SchemaError, ToolRegistry
from policyctl.runtime.mcp import MCPToolError, mcp_result_text, mcp_tools

LISTING = [
    {
        "name": "Search Issues",
        "description": "Search the tracker.",
        "inputSchema": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": ["integer", "null"]}},
            "required": ["query"],
        },
        "annotations": {"readOnlyHint": True},
    },
    {"name": "search_issues", "inputSchema": {"type": "object"}},
]


def test_listings_become_named_checked_tools() -> None:
    sent: list[tuple[str, dict[str, Any]]] = []

    async def call(name: str, arguments: dict[str, Any]) -> Any:
        sent.append((name, arguments))
        return {"content": [{"type": "text", "text": "3 issues"}, {"type": "image"}]}

    first, second = mcp_tools("GitHub", LISTING, call)
    assert (first.name, second.name) == ("github__search-issues", "github__search_issues")
    assert first.plugin_id == "bundle-mcp" and first.concurrency_safe
    assert not second.concurrency_safe
    policy = load_policy_text("catalog: nanobot\n")
    registry = ToolRegistry([first, second])
    gate = CallGate(resolve(policy, None, registry.inventory(policy.catalog)), registry)
    out = asyncio.run(gate.call(first.name, {"query": "bug", "limit": "5"}))
    assert out.content() == "3 issues\n[image content not shown]"
    assert sent == [("Search Issues", {"query": "bug", "limit": 5})]
    refused = asyncio.run(gate.call(first.name, {"limit": 5}))
    assert not refused.ok and "query: required" in refused.content()


def test_a_listing_with_a_schema_the_runtime_cannot_enforce_is_refused() -> None:
    async def call(name: str, arguments: dict[str, Any]) -> Any:
        return None

    bad = {"name": "x", "inputSchema": {"type": "object", "properties": {"n": {"type": "int"}}}}
    with pytest.raises(SchemaError, match="is not a JSON type"):
        mcp_tools("srv", [bad], call)
    with pytest.raises(ValueError, match="has no name"):
        mcp_tools("srv", [{"inputSchema": {}}], call)


def test_results() -> None:
    assert mcp_result_text({"content": [], "structuredContent": {"a": 1}}) == '{"a": 1}'
    with pytest.raises(MCPToolError, match="rate limited"):
        mcp_result_text({"content": [{"type": "text", "text": "rate limited"}], "isError": True})
    assert mcp_result_text({"content": "not a list"}) == ""
