"""The OpenAI-compatible provider against a real loopback server, and the reference tools."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from policyctl import RunContext, load_policy_text
from policyctl.runtime import (
    OpenAICompatProvider,
    Runtime,
    ToolRegistry,
    make_builtin_tools,
)
from policyctl.runtime.builtin_tools import OUTPUT_LIMIT, WorkspaceError, truncate


class FakeModel(BaseHTTPRequestHandler):
    """Plays the model: first asks to read a file, then answers with what it read."""

    requests: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:  # the stdlib's method name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeModel.requests.append(
            {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
        )
        tool_results = [m for m in body["messages"] if m["role"] == "tool"]
        if not tool_results:
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {
                            "name": "read_file",
                            "arguments": json.dumps({"path": "notes.txt"}),
                        },
                    },
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "exec", "arguments": json.dumps({"command": "id"})},
                    },
                ],
            }
        else:
            message = {"role": "assistant", "content": f"I read: {tool_results[0]['content']}"}
        payload = json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            }
        )
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload.encode())

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def model_server() -> Iterator[str]:
    FakeModel.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeModel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_openai_compatible_provider_over_http(model_server: str, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("buy milk", encoding="utf-8")
    policy = load_policy_text("catalog: nanobot\ntools: {deny: [exec]}\n")
    provider = OpenAICompatProvider(model_server, "local-model", api_key="k-test")
    runtime = Runtime(policy, ToolRegistry(make_builtin_tools(tmp_path)), provider)
    result = asyncio.run(runtime.run_turn(RunContext(agent="main"), "what do my notes say?"))
    assert result.final_text == "I read: buy milk"
    first = FakeModel.requests[0]
    assert first["path"] == "/v1/chat/completions" and first["auth"] == "Bearer k-test"
    assert first["body"]["model"] == "local-model"
    offered = [t["function"]["name"] for t in first["body"]["tools"]]
    assert offered == [
        "edit_file",
        "list_dir",
        "read_file",
        "write_file",
    ]  # exec denied: not offered
    exec_result = next(m for m in result.messages if m.get("tool_call_id") == "call_2")
    assert json.loads(exec_result["content"])["status"] == "blocked"


def test_workspace_confinement(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "secret.txt"
    outside.write_text("s3cret", encoding="utf-8")
    (ws / "link").symlink_to(outside)
    (ws / "dirlink").symlink_to(tmp_path)
    tools = {t.name: t for t in make_builtin_tools(ws)}

    async def run(name: str, **kw: Any) -> Any:
        return await tools[name].execute(**kw)

    for path in ("../secret.txt", "link", "dirlink/secret.txt", "/etc/passwd"):
        with pytest.raises(WorkspaceError):
            asyncio.run(run("read_file", path=path))
    with pytest.raises(WorkspaceError):
        asyncio.run(run("write_file", path="dirlink/evil.txt", content="x"))
    with pytest.raises(WorkspaceError):
        asyncio.run(run("write_file", path="link", content="x"))
    assert outside.read_text(encoding="utf-8") == "s3cret"
    assert asyncio.run(run("write_file", path="sub/a.txt", content="hello")).startswith("wrote 5")
    assert asyncio.run(run("read_file", path="sub/a.txt")) == "hello"
    assert asyncio.run(run("list_dir", path=".")) == ["dirlink/", "link", "sub/"]


def test_exec_command_line_env_timeout_and_truncation(tmp_path: Path) -> None:
    tools = {t.name: t for t in make_builtin_tools(tmp_path)}
    exec_tool = tools["exec"]
    assert exec_tool.exclusive and not exec_tool.concurrency_safe
    os.environ["POLICYCTL_TEST_SECRET"] = "leak-me"
    try:
        out = asyncio.run(exec_tool.execute(command="echo $POLICYCTL_TEST_SECRET; echo $HOME"))
    finally:
        del os.environ["POLICYCTL_TEST_SECRET"]
    assert "leak-me" not in out["stdout"] and str(tmp_path.resolve()) in out["stdout"]
    # a shell command line, as the call rules read it: quoted metacharacters stay words
    out = asyncio.run(exec_tool.execute(command="echo 'a;' rm -rf /"))
    assert out["stdout"].strip() == "a; rm -rf /"
    with pytest.raises(TimeoutError):
        asyncio.run(exec_tool.execute(command="sleep 5", timeout=0.2))
    big = asyncio.run(exec_tool.execute(command="python3 -c \"print('x' * 30000 + 'END')\""))
    assert len(big["stdout"]) < OUTPUT_LIMIT + 100 and big["stdout"].rstrip().endswith("END")
    assert "bytes cut" in big["stdout"]


def test_truncate_keeps_head_and_tail() -> None:
    text = "H" * 8000 + "M" * 8000 + "T" * 8000
    cut = truncate(text)
    assert cut.startswith("H" * 5000) and cut.endswith("T" * 5000) and "14000 characters cut" in cut
    assert truncate("short") == "short"


def test_agent_demo_runs() -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, str(root / "examples" / "agent_demo.py")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert "tools offered to the model: ['read']" in out.stdout
    assert '"status": "blocked"' in out.stdout and '"stage": 1' in out.stdout
    assert "model: We are open from 9 to 5." in out.stdout
    assert '"label": "tools.profile (messaging)"' in out.stdout
    assert '"fix"' not in out.stdout and '"source"' not in out.stdout  # the default detail


def test_agent_demo_docstring_describes_the_default_refusal_it_prints() -> None:
    import ast

    root = Path(__file__).resolve().parents[2]
    module = ast.parse((root / "examples" / "agent_demo.py").read_text(encoding="utf-8"))
    doc = " ".join((ast.get_docstring(module) or "").split())
    assert "layer 1" in doc and "messaging profile" in doc
    assert "default refusal detail (`layer`)" in doc and 'refusal_detail="full"' in doc
    assert "sandboxed" not in doc  # exec is removed by the profile, not by the sandbox layer
