"""Argument problems are located: a JSON pointer for programs (`ArgumentError.problems`,
`CallError.problems`), the dotted path for the model; casting and checking are public."""

from __future__ import annotations

from typing import Any

import pytest

from policyctl import load_policy_text, resolve
from policyctl.runtime import (
    ArgumentError,
    ArgumentProblem,
    CallError,
    RuntimeTool,
    ToolRegistry,
    cast_arguments,
    check_arguments,
    check_tool_schema,
    coerce_arguments,
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "n": {"type": "integer", "minimum": 0},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            },
        },
        "a/b~c": {"type": "boolean"},
    },
    "required": ["n"],
    "additionalProperties": False,
}

# (arguments, the problems as (JSON pointer, message))
CASES = [
    ({"n": "x"}, [("/n", "expected integer, got string")]),
    ({"n": -1}, [("/n", "must be >= 0")]),
    ({}, [("/n", "required")]),
    ({"n": 1, "extra": 1}, [("/extra", "unknown parameter")]),
    (
        {"n": 1, "items": [{"name": "a"}, {"name": 2}, {}]},
        [("/items/1/name", "expected string, got integer"), ("/items/2/name", "required")],
    ),
    ({"n": 1, "a/b~c": "maybe"}, [("/a~1b~0c", "expected boolean, got string")]),
    ({"n": float("nan")}, [("/n", "NaN and infinities are not accepted")]),
    ([1], [("", "arguments must be a JSON object, got list")]),
    (
        "{not json",
        [("", "arguments are not valid JSON: Expecting property name enclosed in double quotes")],
    ),
]


@pytest.mark.parametrize(("raw", "expected"), CASES, ids=lambda v: repr(v)[:40])
def test_problems_are_located_by_json_pointer(raw: Any, expected: list[tuple[str, str]]) -> None:
    with pytest.raises(ArgumentError) as caught:
        coerce_arguments(raw, SCHEMA)
    found = [(p.path, p.message) for p in caught.value.problems]
    assert sorted(found) == sorted(expected)
    assert caught.value.errors == [str(p) for p in caught.value.problems]


def test_the_model_reads_the_dotted_path() -> None:
    with pytest.raises(ArgumentError) as caught:
        coerce_arguments({"n": 1, "items": [{"name": 2}]}, SCHEMA)
    assert str(caught.value) == "items[0].name: expected string, got integer"


def test_a_call_error_carries_the_problems() -> None:
    async def run(**_: Any) -> str:
        return "ok"

    registry = ToolRegistry([RuntimeTool("read_file", "probe", SCHEMA, run, read_only=True)])
    policy = load_policy_text("catalog: nanobot\n")
    resolution = resolve(policy, None, registry.inventory(policy.catalog))
    error = registry.prepare_call("read_file", {"n": "x", "items": [{}]}, resolution)
    assert isinstance(error, CallError) and error.kind == "arguments"
    assert [(p.path, p.message) for p in error.problems] == [
        ("/n", "expected integer, got string"),
        ("/items/0/name", "required"),
    ]
    shown = error.to_result()
    assert shown["problems"] == [
        {"path": "/n", "message": "expected integer, got string"},
        {"path": "/items/0/name", "message": "required"},
    ]


def test_casting_and_checking_are_separate_steps() -> None:
    schema = check_tool_schema("probe", SCHEMA)
    sent = {"n": "5", "a/b~c": "true"}
    assert check_arguments(sent, schema) == [
        ArgumentProblem("/n", "expected integer, got string", "n"),
        ArgumentProblem("/a~1b~0c", "expected boolean, got string", "a/b~c"),
    ]
    cast = cast_arguments(sent, schema)
    assert cast == {"n": 5, "a/b~c": True}
    assert check_arguments(cast, schema) == []
