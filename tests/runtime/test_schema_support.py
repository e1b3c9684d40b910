"""Tool parameter schemas: what @tool and MCP tools declare is cast and enforced in full."""

from __future__ import annotations

import math
from typing import Any, Literal, Optional

import pytest

from policyctl.runtime import RuntimeTool, tool
from policyctl.runtime.arguments import ArgumentError, coerce_arguments
from policyctl.runtime.schema import SchemaError


async def _noop(**_: Any) -> str:
    return "ok"


def errors(raw: Any, schema: dict[str, Any]) -> list[str]:
    with pytest.raises(ArgumentError) as exc:
        coerce_arguments(raw, schema)
    return exc.value.errors


RATE = {"type": "object", "properties": {"rate": {"type": "number"}}}
BOUNDED = {"type": "object", "properties": {"rate": {"type": "number", "minimum": 0, "maximum": 1}}}


@pytest.mark.parametrize(
    "raw",
    [
        '{"rate": NaN}',
        '{"rate": Infinity}',
        '{"rate": -Infinity}',
        {"rate": math.nan},
        {"rate": math.inf},
        {"rate": "1e999"},
        {"other": {"deep": [math.nan]}},
    ],
)
def test_nan_and_infinities_never_pass(raw: Any) -> None:
    assert errors(raw, RATE)
    assert errors(raw, BOUNDED)


def test_optional_from_a_signature_is_cast_and_validated() -> None:
    @tool()
    async def search(query: str, limit: int | None = None, page: Optional[int] = None) -> str:  # noqa: UP045
        """Search."""
        return query

    props = search.parameters["properties"]
    assert props["limit"] == {"type": ["integer", "null"]} == props["page"]
    assert coerce_arguments({"query": "q", "limit": "5"}, search.parameters)["limit"] == 5
    assert coerce_arguments({"query": "q", "limit": None}, search.parameters)["limit"] is None
    assert "limit: expected integer or null, got string" in errors(
        {"query": "q", "limit": "many"}, search.parameters
    )


def test_signature_literal_dict_and_list_types() -> None:
    @tool()
    async def tag(mode: Literal["a", "b"], labels: dict[str, int], ids: list[int]) -> str:
        """Tag."""
        return mode

    assert coerce_arguments(
        {"mode": "a", "labels": {"x": "2"}, "ids": ["1", "2"]}, tag.parameters
    ) == {"mode": "a", "labels": {"x": 2}, "ids": [1, 2]}
    assert "labels.y: expected integer, got string" in errors(
        {"mode": "a", "labels": {"y": "no"}, "ids": []}, tag.parameters
    )
    assert any(
        "mode: must be one of" in e
        for e in errors({"mode": "c", "labels": {}, "ids": []}, tag.parameters)
    )


class Custom:
    pass


def test_unsupported_annotation_is_refused_when_the_tool_is_made() -> None:
    with pytest.raises(TypeError, match="has no JSON Schema"):

        @tool()
        async def bad(thing: Custom) -> str:
            """Bad."""
            return ""


def test_additional_properties_schema_is_enforced() -> None:
    schema = {"type": "object", "additionalProperties": {"type": "integer"}}
    assert coerce_arguments({"a": "3"}, schema) == {"a": 3}
    assert "b: expected integer, got string" in errors({"b": "x"}, schema)


def test_type_list_and_nullable_are_cast() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": ["integer", "null"]},
            "m": {"type": "integer", "nullable": True},
        },
    }
    assert coerce_arguments({"n": "4", "m": "null"}, schema) == {"n": 4, "m": None}
    assert coerce_arguments({"m": None}, schema) == {"m": None}


def test_array_bounds_enum_const_and_bool_is_not_one() -> None:
    schema = {
        "type": "object",
        "properties": {
            "xs": {"type": "array", "minItems": 1, "maxItems": 2, "uniqueItems": True},
            "level": {"enum": [1, 2]},
            "kind": {"const": "fixed"},
        },
    }
    assert "xs: must have at least 1 items" in errors({"xs": []}, schema)
    assert "xs: must have at most 2 items" in errors({"xs": [1, 2, 3]}, schema)
    assert "xs: items must be unique" in errors({"xs": [1, 1.0]}, schema)
    assert errors({"level": True}, schema)  # True == 1 in Python, not in JSON
    assert 'kind: must be "fixed"' in errors({"kind": "other"}, schema)
    assert coerce_arguments({"xs": [1], "level": 2, "kind": "fixed"}, schema)["level"] == 2


def test_any_of_ref_and_exclusive_bounds() -> None:
    schema = {
        "type": "object",
        "properties": {
            "limit": {"anyOf": [{"type": "integer", "exclusiveMinimum": 0}, {"type": "null"}]},
            "item": {"$ref": "#/$defs/Item"},
        },
        "$defs": {"Item": {"type": "object", "required": ["name"]}},
    }
    assert coerce_arguments({"limit": "3"}, schema) == {"limit": 3}
    assert errors({"limit": 0}, schema)
    assert "item.name: required" in errors({"item": {}}, schema)


def test_root_without_type_is_an_object_and_gets_cast() -> None:
    schema = {"properties": {"n": {"type": "integer"}}}
    assert coerce_arguments({"n": "7"}, schema) == {"n": 7}


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "array"}, "must be an object schema"),
        ({"type": "object", "properties": {"n": {"type": "int"}}}, "is not a JSON type"),
        ({"type": "object", "properties": {"n": {"minimum": "0"}}}, "finite number"),
        ({"type": "object", "properties": {"n": {"maximum": math.nan}}}, "finite number"),
        ({"type": "object", "properties": {"s": {"pattern": "("}}}, "not a regular expression"),
        ({"type": "object", "properties": {"s": {"$ref": "#/$defs/Missing"}}}, "nothing at that"),
        ({"type": "object", "properties": {"s": {"$ref": "http://x/y"}}}, "only references"),
    ],
)
def test_unusable_schemas_are_refused_when_the_tool_is_made(
    schema: dict[str, Any], message: str
) -> None:
    with pytest.raises(SchemaError, match=message):
        RuntimeTool("t", "t", schema, _noop)


def test_the_schema_dict_is_not_shared() -> None:
    given = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    made = tool(parameters=given)(_noop_tool)
    given["required"].clear()  # the caller changes its dict
    shown = made.to_schema()["function"]["parameters"]
    shown["properties"]["n"]["type"] = "string"  # a provider changes what it was given
    assert "n: required" in errors({}, made.parameters)
    assert "n: expected integer, got string" in errors({"n": "x"}, made.parameters)


async def _noop_tool() -> str:
    """Nothing."""
    return ""


def test_the_json_text_null_is_refused_not_taken_as_no_arguments() -> None:
    assert errors("null", RATE) == ["arguments must be a JSON object, got null"]
    assert coerce_arguments(None, RATE) == {}  # no arguments sent at all
    assert coerce_arguments("", RATE) == {}


def test_huge_and_deep_json_arguments_are_errors_not_crashes() -> None:
    assert errors('{"n": ' + "9" * 5000 + "}", RATE)
    assert errors("[" * 100_000 + "]" * 100_000, RATE)


def test_pattern_one_of_all_of_and_not() -> None:
    schema = {
        "type": "object",
        "properties": {
            "id": {"type": "string", "pattern": "^[a-z]+$"},
            "v": {"oneOf": [{"type": "integer"}, {"type": "integer", "minimum": 5}]},
            "w": {"allOf": [{"type": "integer"}, {"maximum": 3}], "not": {"const": 2}},
        },
    }
    assert "id: must match '^[a-z]+$'" in errors({"id": "A1"}, schema)
    assert any("exactly one" in e for e in errors({"v": 7}, schema))  # matches both branches
    assert coerce_arguments({"v": 1, "w": "3"}, schema) == {"v": 1, "w": 3}
    assert "w: must be <= 3" in errors({"w": 4}, schema)
    assert "w: matches a shape that is not allowed" in errors({"w": 2}, schema)


def test_integers_beyond_any_float_are_checked_not_crashed_on() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "multipleOf": 3, "maximum": 10},
            "x": {"type": "number", "multipleOf": 0.5},
        },
    }
    assert "n: must be <= 10" in errors({"n": 3 * 10**400}, schema)
    assert "x: must be a multiple of 0.5" in errors({"x": 10**400 + 1}, schema)
    assert coerce_arguments({"n": 9}, schema) == {"n": 9}
