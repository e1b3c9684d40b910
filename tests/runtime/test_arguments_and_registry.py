"""Tool contract, argument handling and the registry (nanobot's rules, semantics 11)."""

from __future__ import annotations

import asyncio

import pytest

from policyctl import load_policy_text, resolve
from policyctl.runtime import CallError, PreparedCall, RuntimeTool, ToolRegistry, tool
from policyctl.runtime.arguments import ArgumentError, coerce_arguments, validate
from policyctl.runtime.mcp import as_mcp_tool

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "limit": {"type": "integer", "minimum": 1},
        "ratio": {"type": "number"},
        "force": {"type": "boolean"},
        "mode": {"type": "string", "enum": ["a", "b"]},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "size": {"type": "integer"}},
                "required": ["name"],
            },
        },
    },
    "required": ["path"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"path": "a"}, {"path": "a"}),
        ('{"path": "a", "limit": "5"}', {"path": "a", "limit": 5}),  # JSON string, cast
        ({"arguments": {"path": "a"}}, {"path": "a"}),  # lone wrapper
        ({"arguments": '{"path": "a"}'}, {"path": "a"}),
        ({"path": "a", "force": "yes", "ratio": "0.5"}, {"path": "a", "force": True, "ratio": 0.5}),
        ({"path": "a", "force": "0"}, {"path": "a", "force": False}),
        (
            {"path": "a", "items": [{"name": "x", "size": "3"}]},
            {"path": "a", "items": [{"name": "x", "size": 3}]},
        ),
    ],
)
def test_coercion(raw: object, expected: dict[str, object]) -> None:
    assert coerce_arguments(raw, SCHEMA) == expected


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ("[1, 2]", "arguments must be a JSON object, got list"),
        ("not json", "arguments are not valid JSON"),
        ('{"path": "a"} {}', "arguments are not valid JSON: Extra data"),
        ('\ufeff{"path": "a"}', "arguments are not valid JSON: Unexpected UTF-8 BOM"),
        ('{"path": "a", "limit": NaN}', "arguments are not usable JSON: NaN is not a number"),
        (42, "arguments must be a JSON object, got int"),
        ({}, "path: required"),
        ({"path": "a", "limit": "many"}, "limit: expected integer, got str"),
        ({"path": "a", "limit": 0}, "limit: must be >= 1"),
        ({"path": "a", "mode": "c"}, 'mode: must be one of "a", "b"'),
        ({"path": "a", "nope": 1}, "nope: unknown parameter"),
        ({"path": "a", "items": [{"size": 1}]}, "items[0].name: required"),
        ({"path": "a", "items": [{"name": 3}]}, "items[0].name: expected string, got int"),
    ],
)
def test_argument_errors_have_dotted_paths(raw: object, error: str) -> None:
    with pytest.raises(ArgumentError) as exc:
        coerce_arguments(raw, SCHEMA)
    assert any(error in e for e in exc.value.errors), exc.value.errors


def test_arguments_parameter_is_not_unwrapped() -> None:
    schema = {"type": "object", "properties": {"arguments": {"type": "object"}}}
    assert coerce_arguments({"arguments": {"x": 1}}, schema) == {"arguments": {"x": 1}}


def test_validate_reports_every_error() -> None:
    errors = validate({"limit": "x", "nope": 1}, SCHEMA)
    assert set(errors) == {
        "path: required",
        "limit: expected integer, got string",
        "nope: unknown parameter",
    }


def test_tool_decorator_and_schemas() -> None:
    @tool(read_only=True)
    async def search(query: str, limit: int = 5, tags: list[str] | None = None) -> str:
        """Search the index.

        More text that is not the description."""
        return query

    assert search.name == "search" and search.description == "Search the index."
    assert search.parameters["required"] == ["query"]
    assert search.parameters["properties"]["limit"] == {"type": "integer"}
    assert search.concurrency_safe
    assert search.to_schema("openai") == {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search the index.",
            "parameters": search.parameters,
        },
    }
    assert search.to_schema("anthropic") == {
        "name": "search",
        "description": "Search the index.",
        "input_schema": search.parameters,
    }
    with pytest.raises(TypeError):
        tool()(lambda: None)  # type: ignore[arg-type]


async def _noop(**_: object) -> str:
    return "ok"


def _tools(*names: str, plugin: str | None = None) -> list[RuntimeTool]:
    made = [RuntimeTool(n, n, {"type": "object", "properties": {}}, _noop) for n in names]
    return [as_mcp_tool(t) for t in made] if plugin == "bundle-mcp" else made


def test_definitions_are_exactly_the_allowed_tools_in_a_stable_order() -> None:
    policy = load_policy_text("catalog: nanobot\ntools: {deny: [exec]}\n")
    registry = ToolRegistry(
        [*_tools("write_file", "exec", "read_file"), *_tools("gh__b", "gh__a", plugin="bundle-mcp")]
    )
    res = resolve(policy, None, registry.inventory(policy.catalog))
    names = [d["function"]["name"] for d in registry.definitions(res)]
    assert names == ["read_file", "write_file", "gh__a", "gh__b"]
    assert registry.definitions(res) is registry.definitions(res)  # cached
    before = registry.definitions(res)
    registry.register(_tools("list_dir")[0])
    res2 = resolve(policy, None, registry.inventory(policy.catalog))
    assert registry.definitions(res2) is not before
    assert "list_dir" in [d["function"]["name"] for d in registry.definitions(res2)]
    with pytest.raises(ValueError):
        registry.register(_tools("list_dir")[0])


def test_prepare_call_misses_explain_themselves() -> None:
    policy = load_policy_text("catalog: nanobot\ntools:\n  deny: [exec]\n")
    registry = ToolRegistry(_tools("exec", "read_file", "list_dir"))
    res = resolve(policy, None, registry.inventory(policy.catalog))
    removed = registry.prepare_call("exec", {}, res)
    assert isinstance(removed, CallError) and removed.removal is not None
    assert removed.removal.stage == 3 and "removed at layer 3" in removed.message
    assert removed.fix is not None and "tools.deny" in removed.fix
    typo = registry.prepare_call("ReadFile", {}, res)
    assert isinstance(typo, CallError) and 'Did you mean "read_file"?' in typo.message
    unknown = registry.prepare_call("teleport", {}, res)
    assert isinstance(unknown, CallError) and "Available: list_dir, read_file" in unknown.message
    ok = registry.prepare_call("read_file", '{"arguments": {}}', res)
    assert isinstance(ok, PreparedCall) and ok.arguments == {}
    assert asyncio.run(ok.tool.execute(**ok.arguments)) == "ok"
