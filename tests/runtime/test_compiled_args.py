"""The compiled acceptor of a flat schema answers exactly as the general cast and check does."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policyctl.runtime import RuntimeTool
from policyctl.runtime.arguments import ArgumentError, coerce_arguments
from policyctl.runtime.compiled_args import compile_acceptor
from policyctl.runtime.schema import check_tool_schema

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.sampled_from(["1", "2.0", "2.5", " 7 ", "true", "no", "null", "none", "", "1e999", "x"]),
)
values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner)
)
KINDS = ["string", "integer", "number", "boolean", "null"]
prop_schemas = st.one_of(
    st.just({}),
    st.builds(lambda k: {"type": k}, st.sampled_from(KINDS)),
    st.builds(lambda ks: {"type": ks}, st.lists(st.sampled_from(KINDS), min_size=1, max_size=3)),
    st.builds(lambda k: {"type": k, "nullable": True}, st.sampled_from(KINDS)),
    st.builds(lambda k: {"type": k, "description": "d"}, st.sampled_from(KINDS)),
)
NAMES = ["path", "limit", "arguments", "x"]


@st.composite
def flat_schemas(draw: Any) -> dict[str, Any]:
    props = draw(st.dictionaries(st.sampled_from(NAMES), prop_schemas, max_size=4))
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if props and draw(st.booleans()):
        schema["required"] = draw(st.lists(st.sampled_from(sorted(props)), unique=True))
    extra = draw(st.sampled_from([None, True, False]))
    if extra is not None:
        schema["additionalProperties"] = extra
    return check_tool_schema("t", schema)


def outcome(raw: Any, schema: dict[str, Any], **kw: Any) -> Any:
    try:
        result = coerce_arguments(raw, schema, **kw)
        return ("ok", result, [type(v) for v in result.values()])
    except ArgumentError as exc:
        return ("error", str(exc))


@settings(max_examples=800, deadline=None)
@given(st.data())
def test_the_acceptor_agrees_with_the_general_path(data: Any) -> None:
    schema = data.draw(flat_schemas())
    names = st.sampled_from([*sorted(schema["properties"]), "other"])
    raw = data.draw(st.dictionaries(names, values, max_size=4))
    agree(schema, raw)


def agree(schema: dict[str, Any], raw: Any) -> None:
    accept = compile_acceptor(schema)
    assert accept is not None  # every schema here is flat
    general = outcome(raw, schema)
    assert outcome(raw, schema, accept=accept) == general
    if general[0] == "ok":  # never the caller's dict: a tool cannot change what was logged
        assert accept(raw) is not raw


@pytest.mark.parametrize(
    ("kind", "value"),
    [
        ("integer", True),  # JSON true is not 1
        ("number", False),
        ("integer", 2.0),  # cast to 2
        ("integer", 2.5),
        ("integer", "7"),
        ("number", "1e999"),  # cast to infinity: refused
        ("boolean", "yes"),
        ("null", "none"),
        ("string", 3),
        ("integer", float("nan")),
        (["integer", "null"], "null"),
    ],
)
def test_the_acceptor_agrees_on_the_edges(kind: Any, value: Any) -> None:
    schema = check_tool_schema("t", {"properties": {"p": {"type": kind}}, "required": ["p"]})
    agree(schema, {"p": value})
    agree(schema, {"arguments": {"p": value}})  # the wrapper goes the general way


def test_a_schema_with_any_other_keyword_has_no_acceptor() -> None:
    for prop in ({"type": "integer", "minimum": 0}, {"enum": ["a"]}, {"type": "array"}):
        schema = check_tool_schema("t", {"type": "object", "properties": {"p": prop}})
        assert compile_acceptor(schema) is None
    assert compile_acceptor(check_tool_schema("t", {"additionalProperties": {}})) is None


async def _noop(**_: Any) -> None:
    return None


def test_a_tool_compiles_its_acceptor_once_when_made() -> None:
    tool = RuntimeTool("t", "t", {"properties": {"n": {"type": "integer"}}}, _noop)
    assert tool.accept is not None and tool.accept({"n": "3"}) == {"n": 3}
    assert tool.accept({"n": "three"}) is None  # the general path words the refusal


def test_changing_parameters_after_the_tool_is_made_changes_nothing() -> None:
    """The fast acceptor and the general check read one private copy: mutating the public
    `parameters` can neither loosen nor tighten what is accepted, nor what the model is told."""
    from policyctl.runtime.arguments import coerce_arguments
    from policyctl.runtime.tools import RuntimeTool

    async def noop(**_: object) -> str:
        return ""

    schema = {
        "type": "object",
        "properties": {"limit": {"type": "integer", "maximum": 10}},
        "additionalProperties": False,
    }
    tool = RuntimeTool("t", "", schema, noop)
    tool.parameters["properties"]["limit"]["maximum"] = 1000
    tool.parameters["additionalProperties"] = True
    from policyctl.runtime.arguments import ArgumentError

    for accept in (tool.accept, None):
        with pytest.raises(ArgumentError, match="limit"):
            coerce_arguments('{"limit": 500}', tool.checked_schema, accept=accept)
        with pytest.raises(ArgumentError):
            coerce_arguments('{"other": 1}', tool.checked_schema, accept=accept)
    advertised = tool.to_schema()["function"]["parameters"]
    assert advertised["properties"]["limit"]["maximum"] == 10
    assert advertised["additionalProperties"] is False
