"""Run a real agent host (Claude Code, Gemini CLI, Codex CLI) offline, one scripted tool call.

Each host gets a fresh home inside the test's temporary directory (nothing is read from or
written to the user's own settings), a hook command in its own configuration format, and a
model it believes is real: a loopback fake (Claude Code, Codex) or Gemini CLI's own replay of
scripted responses. The hook's stdin and stdout are logged by ``hook_tee.py``, so a test sees
what the host sent and what it was told.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fake_anthropic import FakeAnthropic, ToolUse
from fake_responses import Call, FakeResponses

HERE = Path(__file__).resolve().parent
BIN = HERE / "npm" / "node_modules" / ".bin"
TEE = HERE / "hook_tee.py"
# A host that neither finishes nor fails within this is waiting for something that cannot come
# (a confirmation in a run with no terminal); the test reads that as "did not proceed".
RUN_TIMEOUT = 60.0


def host_binary(name: str) -> Path:
    """The pinned host's executable; a missing one is a failure, never a skip."""
    path = BIN / name
    if not path.exists():
        raise AssertionError(
            f"{path} is missing: install the pinned hosts with `npm ci` in {BIN.parent.parent}"
        )
    return path


@dataclass
class HostRun:
    """What one host run did: its exit, its output, the hook exchanges and the workspace."""

    returncode: int | None  # None: stopped after the timeout
    stdout: str
    stderr: str
    seconds: float
    workdir: Path
    exchanges: list[dict[str, Any]]  # {"stdin": <payload>, "stdout": <hook's answer text>}
    model_saw: list[str] = field(default_factory=list)  # tool results sent back to the model

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8"}
    if "PYTHONPATH" in os.environ:  # the hook imports this checkout's policyctl
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    env.update(extra)
    return env


def _tee_command(hook: list[str], log: Path) -> str:
    return shlex.join([sys.executable, str(TEE), str(log), *hook])


def _run(
    argv: list[str], cwd: Path, env: dict[str, str], timeout: float
) -> tuple[int | None, str, str, float]:
    start = time.monotonic()
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)  # the host and its children (node, the hook) in one group
        out, err = proc.communicate()
        code = None
    return code, out, err, time.monotonic() - start


def _exchanges(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]


def _dirs(tmp: Path) -> tuple[Path, Path, Path]:
    home, work = tmp / "home", tmp / "work"
    home.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    return home, work, tmp / "hook-log.jsonl"


def run_claude(
    tmp: Path,
    hook: list[str],
    tool: str,
    tool_input: dict[str, Any],
    permissions: dict[str, Any] | None = None,
    timeout: float = RUN_TIMEOUT,
) -> HostRun:
    """``claude -p`` whose model calls ``tool`` once, against a loopback Messages API."""
    home, work, log = _dirs(tmp)
    settings = tmp / "settings.json"
    settings.write_text(
        json.dumps(
            {
                "permissions": permissions or {},
                "hooks": {
                    "PreToolUse": [
                        {
                            "matcher": "*",
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": _tee_command(hook, log),
                                    "timeout": 30,
                                }
                            ],
                        }
                    ]
                },
            }
        ),
        encoding="utf-8",
    )
    with FakeAnthropic([ToolUse(tool, tool_input)]) as fake:
        env = _env(
            home,
            ANTHROPIC_BASE_URL=fake.url,
            ANTHROPIC_API_KEY="sk-ant-fake",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
        )
        argv = [
            str(host_binary("claude")),
            "-p",
            "Run the tool.",
            "--settings",
            str(settings),
            "--output-format",
            "json",
        ]
        code, out, err, secs = _run(argv, work, env, timeout)
        seen = [_text(r.get("content")) for r in fake.tool_results()]
    return HostRun(code, out, err, secs, work, _exchanges(log), seen)


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return str(content)


def run_gemini(
    tmp: Path,
    hook: list[str],
    tool: str,
    args: dict[str, Any],
    mode: str = "--yolo",
    timeout: float = RUN_TIMEOUT,
) -> HostRun:
    """``gemini -p`` replaying a scripted function call (``--fake-responses-non-strict``)."""
    home, work, log = _dirs(tmp)
    (home / ".gemini").mkdir(exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(
        json.dumps(
            {
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "hooks": {
                    "BeforeTool": [
                        {
                            "matcher": ".*",
                            "hooks": [
                                {
                                    "type": "command",
                                    "name": "policyctl",
                                    "command": _tee_command(hook, log),
                                    "timeout": 30000,
                                }
                            ],
                        }
                    ]
                },
            }
        ),
        encoding="utf-8",
    )
    replies = tmp / "replies.jsonl"
    call = {"functionCall": {"name": tool, "args": args}}
    text = {"text": "All done."}
    replies.write_text(
        "".join(
            json.dumps(
                {
                    "method": "generateContentStream",
                    "response": [
                        {
                            "candidates": [
                                {
                                    "content": {"role": "model", "parts": [part]},
                                    "finishReason": "STOP",
                                    "index": 0,
                                }
                            ]
                        }
                    ],
                }
            )
            + "\n"
            for part in (call, text)
        ),
        encoding="utf-8",
    )
    # -m: without a model, the router's classifier would consume the first scripted reply.
    argv = [
        str(host_binary("gemini")),
        "-m",
        "gemini-2.5-flash",
        "--fake-responses-non-strict",
        str(replies),
        *mode.split(),
        "--skip-trust",
        "-p",
        "Run the tool.",
        "-o",
        "json",
    ]
    env = _env(home, GEMINI_API_KEY="fake-key", NO_COLOR="1")
    code, out, err, secs = _run(argv, work, env, timeout)
    seen = [line for line in err.splitlines() if line.startswith("Error executing tool")]
    return HostRun(code, out, err, secs, work, _exchanges(log), seen)


CODEX_MODEL = "gpt-5.5"  # a model Codex knows: its metadata offers apply_patch


def run_codex(
    tmp: Path,
    hook: list[str],
    call: Call,
    timeout: float = RUN_TIMEOUT,
    trust_hooks: bool = True,
) -> HostRun:
    """``codex exec`` whose model makes ``call`` once, against a loopback Responses API."""
    home, work, log = _dirs(tmp)
    codex_home = home / ".codex"
    codex_home.mkdir(exist_ok=True)
    with FakeResponses([call]) as fake:
        (codex_home / "config.toml").write_text(
            f'model = "{CODEX_MODEL}"\nmodel_provider = "fake"\n\n'
            "[model_providers.fake]\n"
            f'name = "fake"\nbase_url = "{fake.url}"\nwire_api = "responses"\n'
            'env_key = "FAKE_OPENAI_KEY"\n\n'
            '[[hooks.PreToolUse]]\nmatcher = "*"\n[[hooks.PreToolUse.hooks]]\n'
            f'type = "command"\ncommand = {json.dumps(_tee_command(hook, log))}\ntimeout = 30\n',
            encoding="utf-8",
        )
        # Hooks that were never reviewed in Codex's /hooks screen do not run; this run trusts
        # them for itself only. No sandbox: bubblewrap needs namespaces a container may lack.
        argv = [
            str(host_binary("codex")),
            "exec",
            "--skip-git-repo-check",
            *(["--dangerously-bypass-hook-trust"] if trust_hooks else []),
            "--sandbox",
            "danger-full-access",
            "Run the tool.",
        ]
        env = _env(home, CODEX_HOME=str(codex_home), FAKE_OPENAI_KEY="fake-key")
        code, out, err, secs = _run(argv, work, env, timeout)
        seen = [str(o.get("output", "")) for o in fake.tool_outputs()]
    return HostRun(code, out, err, secs, work, _exchanges(log), seen)
