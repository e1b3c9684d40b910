"""The streamable-HTTP listener: a client's context comes from its token, never a header it
picks; no token, no service; a non-loopback address without tokens is refused."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from .conftest import Setup, run

READER = "r" * 20 + "-reader-token"
WRITER = "w" * 20 + "-writer-token"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_each_token_is_a_context_and_no_token_is_refused(setup: Setup) -> None:
    clients = {
        "clients": {
            "reader": {"token": READER, "context": {"agent": "reader"}},
            "writer": {"token": WRITER, "context": {}},
        }
    }
    (setup.root / "clients.json").write_text(json.dumps(clients))
    port = _port()
    args = setup.gateway_args("--listen", f"127.0.0.1:{port}", "--clients", "clients.json")
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen(
        [sys.executable, *args], cwd=setup.root, env=env, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                refused = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
                break
            except httpx2.TransportError:
                assert time.monotonic() < deadline, "the listener never came up"
                time.sleep(0.2)
        assert refused.status_code == 401

        async def names(token: str) -> tuple[set[str], bool]:
            # the header that names another agent changes nothing: the token decides
            headers = {"Authorization": f"Bearer {token}", "X-Agent": "writer"}
            async with (
                httpx2.AsyncClient(headers=headers) as http,
                Client(streamable_http_client(url, http_client=http)) as client,
            ):
                listed = {t.name for t in (await client.list_tools()).tools}
                result = await client.call_tool("rec__exec", {"command": "ls"})
                return listed, bool(result.is_error)

        async def go() -> None:
            reader, reader_refused = await names(READER)
            writer, writer_refused = await names(WRITER)
            assert "rec__exec" not in reader and "rec__read_file" in reader
            assert reader_refused
            assert "rec__exec" in writer and not writer_refused

        run(go)
        assert [r["arguments"] for r in setup.records()] == [{"command": "ls"}]
    finally:
        proc.kill()
        proc.wait()


def test_a_non_loopback_listener_needs_a_token(setup: Setup) -> None:
    out = subprocess.run(
        [sys.executable, *setup.gateway_args("--listen", "0.0.0.0:8765")],
        capture_output=True,
        text=True,
        cwd=setup.root,
        timeout=60,
    )
    assert out.returncode == 2
    assert "PC504" in out.stderr and "--token-file" in out.stderr
    assert "Traceback" not in out.stderr
