"""A call's identity is its canonical JSON: loop detection and a hook's rewrite compare calls
by it, not by Python's `==` (`True == 1`) or a hash (`hash(-1) == hash(-2)`)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from policyctl import load_policy_text, resolve
from policyctl.runtime import (
    CallGate,
    LoopConfig,
    LoopDetector,
    RewriteParams,
    RuntimeTool,
    ToolCallEvent,
    ToolRegistry,
)
from policyctl.runtime.canonical import canonical_json
from policyctl.runtime.loopdetect import params_hash

NAN = float("nan")

# (one call's parameters, another's, the same call?)
IDENTITY = [
    ({"x": True}, {"x": 1}, False),
    ({"x": False}, {"x": 0}, False),
    ({"x": -1}, {"x": -2}, False),  # hash(-1) == hash(-2) in CPython
    ({"x": [-1]}, {"x": [-2]}, False),
    ({"x": {"n": -1}}, {"x": {"n": -2}}, False),
    ({"x": [True]}, {"x": [1]}, False),
    ({"x": "1"}, {"x": 1}, False),
    ({"x": None}, {"x": "null"}, False),
    ({"x": 1.0}, {"x": 1}, True),  # one JSON number
    ({"x": [1.0]}, {"x": [1]}, True),
    ({"x": -0.0}, {"x": 0}, True),
    ({"a": 1, "b": True}, {"b": True, "a": 1}, True),  # key order is irrelevant
    ({"a": {"y": 1, "z": 2}}, {"a": {"z": 2, "y": 1}}, True),
    ({"x": NAN}, {"x": NAN}, True),
    ({"x": 1.5}, {"x": 1.5}, True),
    ({"x": 2**70}, {"x": 2**70 + 1}, False),
]


@pytest.mark.parametrize(("a", "b", "same"), IDENTITY, ids=lambda v: repr(v)[:30])
def test_call_identity_is_the_canonical_json(a: Any, b: Any, same: bool) -> None:
    assert (params_hash(a) == params_hash(b)) is same
    assert (canonical_json(a) == canonical_json(b)) is same


@pytest.mark.parametrize(("a", "b", "same"), IDENTITY, ids=lambda v: repr(v)[:30])
def test_loop_detection_counts_only_the_same_call(a: Any, b: Any, same: bool) -> None:
    loop = LoopDetector(LoopConfig(history=4, warning=2, critical=3, breaker=10))
    assert loop.observe("t", a).level == "ok"
    assert loop.observe("t", b).level == ("warning" if same else "ok")


def test_canonical_json_text() -> None:
    assert canonical_json({"b": [1.0, True, None], "a": "é"}) == '{"a":"é","b":[1,true,null]}'


def _gate(seen: list[dict[str, Any]], hook: Any) -> CallGate:
    async def run(**params: Any) -> str:
        seen.append(params)
        return "ok"

    tool = RuntimeTool("read_file", "probe", {"type": "object"}, run, read_only=True)
    policy = load_policy_text("catalog: nanobot\n")
    registry = ToolRegistry([tool])
    return CallGate(
        resolve(policy, None, registry.inventory(policy.catalog)), registry, hooks=[hook]
    )


@pytest.mark.parametrize(
    ("sent", "rewritten", "received"),
    [
        ({"flag": True}, {"flag": 1}, {"flag": 1}),  # Python: equal dicts; JSON: another call
        ({"n": -1}, {"n": -2}, {"n": -2}),
        ({"n": 1}, {"n": 1.0}, {"n": 1}),  # the same JSON: no rewrite, the call as sent
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, {"a": 1, "b": 2}),
    ],
)
def test_a_hooks_rewrite_is_applied_when_the_canonical_json_differs(
    sent: dict[str, Any], rewritten: dict[str, Any], received: dict[str, Any]
) -> None:
    async def hook(event: ToolCallEvent) -> RewriteParams:
        return RewriteParams(dict(rewritten))

    seen: list[dict[str, Any]] = []
    out = asyncio.run(_gate(seen, hook).call("read_file", dict(sent)))
    assert out.ok, out.content()
    assert seen == [received]
    assert [{k: type(v) for k, v in p.items()} for p in seen] == [
        {k: type(v) for k, v in received.items()}
    ]
