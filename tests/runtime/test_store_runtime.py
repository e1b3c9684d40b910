"""A Runtime fed by a PolicyStore serves the live policy: a new version between turns, never
inside one."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from policyctl import RunContext
from policyctl.runtime import (
    ProviderResponse,
    Runtime,
    RuntimeTool,
    ScriptedProvider,
    ToolCall,
    ToolRegistry,
)
from policyctl.runtime.store import PolicyStore, PolicyUnavailable

OPEN = "catalog: nanobot\n"
CLOSED = "catalog: nanobot\ntools:\n  deny: [read_file]\n"


def call(name: str) -> ProviderResponse:
    return ProviderResponse(tool_calls=(ToolCall(name, name, {}),))


def test_hot_reload_lands_between_turns_never_inside_one(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(OPEN)
    store = PolicyStore(path, settle=0)
    ran: list[str] = []

    async def read(**_: Any) -> str:
        ran.append("read_file")
        return "contents"

    async def tighten(**_: Any) -> str:
        # the operator tightens the policy while this turn is running
        path.write_text(CLOSED)
        assert store.reload()
        return "tightened"

    registry = ToolRegistry(
        [
            RuntimeTool("read_file", "read", {"type": "object"}, read, read_only=True),
            RuntimeTool("tighten", "tighten", {"type": "object"}, tighten, plugin_id="ops"),
        ]
    )
    script = [
        call("tighten"),
        call("read_file"),  # same turn: still the version the turn started on
        ProviderResponse(content="first turn done"),
        call("read_file"),  # next turn: the new version
        ProviderResponse(content="second turn done"),
    ]
    runtime = Runtime(store, registry, ScriptedProvider(script))
    ctx = RunContext(session_key="agent:main:main")
    first = asyncio.run(runtime.run_turn(ctx, "go"))
    assert [o.ok for o in first.outcomes] == [True, True] and ran == ["read_file"]
    assert store.version == 2
    second = asyncio.run(runtime.run_turn(ctx, "again"))
    (refused,) = second.outcomes
    assert refused.veto is not None and refused.veto.kind == "policy" and ran == ["read_file"]
    assert "read_file" not in [
        d["function"]["name"] for d in runtime.registry.definitions(runtime.resolve(ctx))
    ]


def test_a_store_that_never_loaded_grants_nothing(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text("tools: [not, a, mapping\n")
    store = PolicyStore(path)
    runtime = Runtime(store, ToolRegistry([]), ScriptedProvider([]))
    with pytest.raises(PolicyUnavailable):
        asyncio.run(runtime.run_turn(RunContext(), "go"))


def test_a_failed_reload_is_logged_on_the_policyctl_store_logger(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Operators alert on this logger's warnings: its name is part of the interface."""
    path = tmp_path / "policy.yaml"
    path.write_text(OPEN)
    store = PolicyStore(path, settle=0)
    path.write_text("catalog: nanobot\ntools:\n  denny: [read_file]\n")
    with caplog.at_level("WARNING", logger="policyctl.store"):
        assert store.reload() is False
    failed = [r for r in caplog.records if "reload failed" in r.getMessage()]
    assert [r.name for r in failed] == ["policyctl.store"]
    assert "keeping version 1" in failed[0].getMessage()
