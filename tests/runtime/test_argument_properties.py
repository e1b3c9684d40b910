"""Properties over arbitrary model output: argument handling never crashes and what it accepts
satisfies the schema with finite numbers only; any provider body is a response the loop runs
through, or a ProviderError, never a crash."""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from policyctl import load_policy_text, resolve
from policyctl.runtime import (
    CallGate,
    ProviderResponse,
    RuntimeTool,
    ScriptedProvider,
    ToolRegistry,
    run_loop,
)
from policyctl.runtime.arguments import ArgumentError, coerce_arguments, non_finite, validate
from policyctl.runtime.providers import ProviderError, parse_chat_completion
from policyctl.runtime.schema import check_tool_schema

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.integers(-(10**400), 10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from(["1", "2.5", "true", "no", "null", "nan", "inf", "1e999", "-0", " 7 "]),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=20,
)

leaf_schemas = st.one_of(
    st.sampled_from(
        [
            {"type": "integer", "minimum": 0},
            {"type": "number", "maximum": 10},
            {"type": "integer", "multipleOf": 3},
            {"type": "number", "multipleOf": 0.5, "exclusiveMinimum": -1},
            {"type": ["integer", "null"]},
            {"type": "boolean"},
            {"type": "string", "maxLength": 3},
            {"type": "string", "nullable": True},
            {"enum": [1, "a", None]},
            {"const": True},
            {},
        ]
    )
)
schemas = st.recursive(
    leaf_schemas,
    lambda inner: st.one_of(
        st.builds(
            lambda i, n: {"type": "array", "items": i, "maxItems": n}, inner, st.integers(0, 3)
        ),
        st.builds(
            lambda props, extra: {
                "type": "object",
                "properties": props,
                "additionalProperties": extra,
            },
            st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
            st.one_of(st.booleans(), inner),
        ),
        st.builds(lambda a, b: {"anyOf": [a, b]}, inner, inner),
    ),
    max_leaves=8,
)
roots = st.builds(
    lambda props, req: {"type": "object", "properties": props, "required": req},
    st.dictionaries(st.sampled_from(["a", "b", "c", "arguments"]), schemas, max_size=3),
    st.lists(st.sampled_from(["a", "b"]), max_size=2, unique=True),
)


def _as_text(value: Any) -> str:
    return json.dumps(value)  # NaN and Infinity appear as the JSON extensions a model may send


@settings(max_examples=300)
@given(roots, st.one_of(values, values.map(_as_text)))
def test_coercion_never_crashes_and_what_it_accepts_holds(schema: dict[str, Any], raw: Any) -> None:
    schema = check_tool_schema("t", schema)
    try:
        out = coerce_arguments(raw, schema)
    except ArgumentError as exc:
        assert exc.errors
        return
    assert isinstance(out, dict)
    assert non_finite(out) is None
    assert validate(out, schema) == []
    assert all(not (isinstance(v, float) and not math.isfinite(v)) for v in out.values())


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=6)),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "choices",
                    "message",
                    "tool_calls",
                    "function",
                    "name",
                    "arguments",
                    "id",
                    "content",
                    "finish_reason",
                    "delta",
                    "index",
                    "x",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=25,
)


@settings(max_examples=200)
@given(json_values)
def test_any_provider_body_is_a_response_or_a_provider_error(body: Any) -> None:

    try:
        parsed = parse_chat_completion({"choices": [{"message": body}]})
    except ProviderError:
        return

    async def run(**_: Any) -> str:
        return "ok"

    policy = load_policy_text("catalog: nanobot\n")
    registry = ToolRegistry([RuntimeTool("read_file", "r", {"type": "object"}, run)])
    gate = CallGate(resolve(policy, None, registry.inventory(policy.catalog)), registry)
    script = [parsed, ProviderResponse(content="done")]
    result = asyncio.run(run_loop(ScriptedProvider(script), gate, [], max_iterations=2))
    assert result.stopped in {"done", "budget", "empty"}
    json.dumps(result.messages, default=str)
