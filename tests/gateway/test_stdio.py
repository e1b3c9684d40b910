"""The SDK's client over stdio against `policyctl gateway` in front of real servers."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from .conftest import Setup, run, stdio_params

MODES = ["2026-07-28", "legacy"]  # the input_required era and the handshake era


def _text(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent))


def test_list_is_the_policys_resolution_and_refused_calls_never_reach_the_server(
    setup: Setup,
) -> None:
    async def go() -> None:
        async with Client(stdio_params(setup)) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"time__get_current_time", "git__git_status", "rec__exec"} <= names
            assert not names & {"time__convert_time", "git__git_commit", "git__git_add"}
            # schema and annotations are the upstream's
            status = next(
                t for t in (await client.list_tools()).tools if t.name == "git__git_status"
            )
            assert "repo_path" in status.input_schema["properties"]

            # a removed tool called directly: refused with the layer that removed it
            gone = await client.call_tool("time__convert_time", {"source_timezone": "UTC"})
            assert gone.is_error
            assert 'removed at tools.deny by "time__convert_time"' in _text(gone)
            gone = await client.call_tool(
                "git__git_add", {"repo_path": str(setup.repo), "files": ["README"]}
            )
            assert gone.is_error
            # call rules: deny by argument, the server never sees the call
            for name, args in [
                ("rec__exec", {"command": "rm -rf /"}),
                ("rec__read_file", {"path": "/etc/shadow"}),
                ("rec__fetch", {"url": "https://db.internal/dump"}),
                ("nope__tool", {}),
            ]:
                refused = await client.call_tool(name, args)
                assert refused.is_error, name
                assert "policyctl" in _text(refused)
            assert setup.records() == []

            # resources and prompts are blocked unless the server's switch passes them
            assert (await client.list_resources()).resources == []
            assert (await client.list_prompts()).prompts == []

            allowed = await client.call_tool("rec__exec", {"command": "ls -la"})
            assert not allowed.is_error and _text(allowed) == "ran: ls -la"
            now = await client.call_tool("time__get_current_time", {"timezone": "UTC"})
            assert not now.is_error and "UTC" in _text(now)
            log = await client.call_tool("git__git_log", {"repo_path": str(setup.repo)})
            assert not log.is_error and "first" in _text(log)
        assert [r["arguments"] for r in setup.records()] == [{"command": "ls -la"}]

    run(go)
    lines = setup.log.read_text().splitlines()
    assert any('"verdict":"deny"' in line and "tools.deny" in line for line in lines)
    assert all("rm -rf" not in line for line in lines)  # arguments are hashed by default
    assert all('"totalMs"' in line for line in lines)


def _answers(*plans: tuple[str, bool, float]) -> Any:
    """An elicitation callback answering each question by the next plan (action, approve,
    delay before answering)."""
    queue = list(plans)

    async def callback(ctx: Any, params: Any) -> types.ElicitResult:
        assert "rec__exec" in params.message and "git push origin main" in params.message
        assert "tools.ask" in params.message
        action, approve, delay = queue.pop(0)
        await anyio.sleep(delay)
        content = {"approve": approve} if action == "accept" else None
        return types.ElicitResult(action=action, content=content)

    return callback


@pytest.mark.parametrize("mode", MODES)
def test_ask_is_an_elicitation(setup: Setup, mode: str) -> None:
    push = {"command": "git push origin main"}
    plans = [
        ("accept", True, 0.0),
        ("accept", False, 0.0),
        ("decline", False, 0.0),
        ("cancel", False, 0.0),
        ("accept", True, 1.6),  # answered after the approval timeout
    ]

    async def go() -> list[tuple[bool, str]]:
        outcomes = []
        params = stdio_params(setup, "--approval-timeout", "1")
        async with Client(params, mode=mode, elicitation_callback=_answers(*plans)) as client:
            for _ in plans:
                result = await client.call_tool("rec__exec", push)
                outcomes.append((bool(result.is_error), _text(result)))
        async with Client(params, mode=mode) as client:  # no elicitation capability
            result = await client.call_tool("rec__exec", push)
            outcomes.append((bool(result.is_error), _text(result)))
        return outcomes

    outcomes = run(go)
    assert outcomes[0] == (False, "ran: git push origin main")
    assert [o[0] for o in outcomes[1:]] == [True] * 5
    assert "did not approve" in outcomes[1][1]
    assert "declined" in outcomes[2][1]
    assert "cancelled" in outcomes[3][1]
    assert "no answer within 1 s" in outcomes[4][1]
    assert "needs approval" in outcomes[5][1] and "no elicitation capability" in outcomes[5][1]
    assert setup.records() == [{"tool": "exec", "arguments": push}]


def test_a_servers_switch_passes_its_resources_and_prompts(setup: Setup) -> None:
    import json

    servers = json.loads(setup.servers.read_text())
    servers["mcpServers"]["rec"]["policyctl"] = {"resources": "pass", "prompts": "pass"}
    setup.servers.write_text(json.dumps(servers))

    async def go() -> None:
        async with Client(stdio_params(setup)) as client:
            listed = (await client.list_resources()).resources
            assert [str(r.uri) for r in listed] == ["notes://secret"]
            read = await client.read_resource("notes://secret")
            assert "the secret" in str(read.contents[0])
            assert [p.name for p in (await client.list_prompts()).prompts] == ["greet"]

    run(go)
