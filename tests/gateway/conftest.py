"""The gateway in front of real MCP servers: mcp-server-time, mcp-server-git on a temporary
repository and tests/gateway/recording_server.py, which records every call it receives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent
BIN = Path(sys.executable).parent

POLICY = """\
tools:
  allow: ["bundle-mcp"]
  deny:
    - time__convert_time
    - git__git_commit
    - git__git_add
    - "rec__exec(command=rm *)"
    - "rec__read_file(path=/etc/*)"
    - "rec__fetch(url=*.internal/*)"
  ask:
    - "rec__exec(command=git push*)"
agents:
  entries:
    reader:
      tools:
        deny: [rec__exec, rec__fetch]
"""


@dataclass
class Setup:
    root: Path
    policy: Path
    servers: Path
    record: Path
    log: Path
    repo: Path

    def records(self) -> list[dict[str, Any]]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines()]

    def gateway_args(self, *extra: str) -> list[str]:
        return [
            "-m",
            "policyctl",
            "gateway",
            "--policy",
            str(self.policy),
            "--servers",
            str(self.servers),
            "--log",
            str(self.log),
            "--reload-interval",
            "0.2",
            *extra,
        ]

    def start(self, stdin: Any, stdout: Any, stderr: Any, **more: Any) -> subprocess.Popen[bytes]:
        """The gateway as a client starts it: a process on the streams given."""
        return subprocess.Popen(
            [sys.executable, *self.gateway_args()],
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            cwd=self.root,
            env={**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
            **more,
        )


def _tool(name: str) -> str:
    found = BIN / name
    if not found.exists():
        raise AssertionError(f"{name} is not installed: pip install '.[test]' installs it")
    return str(found)


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.test"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    (repo / "README").write_text("hello\n")
    subprocess.run([*git, "add", "README"], check=True)
    subprocess.run([*git, "commit", "-qm", "first"], check=True)
    record = tmp_path / "record.jsonl"
    servers = {
        "mcpServers": {
            "time": {"command": _tool("mcp-server-time"), "args": ["--local-timezone", "UTC"]},
            "git": {"command": _tool("mcp-server-git"), "args": ["--repository", str(repo)]},
            "rec": {
                "command": sys.executable,
                "args": [str(HERE / "recording_server.py")],
                "env": {"RECORD_FILE": str(record)},
            },
        }
    }
    (tmp_path / "servers.json").write_text(json.dumps(servers))
    (tmp_path / "policy.yaml").write_text(POLICY)
    return Setup(
        tmp_path,
        tmp_path / "policy.yaml",
        tmp_path / "servers.json",
        record,
        tmp_path / "log.jsonl",
        repo,
    )


def stdio_params(setup: Setup, *extra: str) -> Any:
    from mcp.client.stdio import StdioServerParameters

    env = {"PYTHONPATH": os.environ.get("PYTHONPATH", ""), "PATH": os.environ.get("PATH", "")}
    return StdioServerParameters(
        command=sys.executable, args=setup.gateway_args(*extra), env=env, cwd=str(setup.root)
    )


def run(fn: Callable[[], Any]) -> Any:
    import anyio

    return anyio.run(fn)
