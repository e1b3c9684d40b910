"""Run a real agent host (Claude Code, Gemini CLI, Codex CLI) offline, one scripted tool call.

Each host gets a fresh home inside the test's temporary directory (nothing is read from or
written to the user's own settings), a hook command in its own configuration format, and a
model it believes is real: a loopback fake (Claude Code, Codex) or Gemini CLI's own replay of
scripted responses. Each run has a network namespace of its own with only loopback in it
(``netns_run.py``), so nothing reaches beyond the fake. The hook's stdin and stdout are logged
by ``hook_tee.py``, so a test sees what the host sent and what it was told.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fake_anthropic import ToolUse, tool_results
from fake_responses import Call, tool_outputs

HERE = Path(__file__).resolve().parent
BIN = HERE / "npm" / "node_modules" / ".bin"
TEE = HERE / "hook_tee.py"
# A host that neither finishes nor fails within this is waiting for something that cannot come
# (a confirmation in a run with no terminal); the test reads that as "did not proceed".
RUN_TIMEOUT = 60.0
# Each run has a network namespace of its own, so the fake model can always have this port.
FAKE_PORT = 8765
FAKE_URL = f"http://127.0.0.1:{FAKE_PORT}"


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
    tmp: Path, argv: list[str], cwd: Path, env: dict[str, str], timeout: float,
    fake: str | None = None, script: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Run the host (and its fake model) in a network namespace that has only loopback."""
    spec = tmp / "netns-spec.json"
    result = tmp / "netns-result.json"
    spec.write_text(json.dumps({
        "argv": argv, "cwd": str(cwd), "env": env, "timeout": timeout, "fake": fake,
        "script": script or [], "port": FAKE_PORT, "result": str(result),
    }), encoding="utf-8")  # fmt: skip
    unshare = shutil.which("unshare")
    assert unshare, "the host tests need util-linux's unshare (a network namespace per host run)"
    userns = [] if os.geteuid() == 0 else ["--map-root-user"]
    runner = [unshare, "--net", *userns, sys.executable, str(HERE / "netns_run.py"), str(spec)]
    done = subprocess.run(runner, capture_output=True, text=True, timeout=timeout + 60)
    assert done.returncode == 0 and result.exists(), (
        f"could not run the host in a network namespace of its own ({done.returncode}): "
        f"{done.stderr[-2000:]}"
    )
    return dict(json.loads(result.read_text(encoding="utf-8")))


def _exchanges(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]


def _dirs(tmp: Path) -> tuple[Path, Path, Path]:
    home, work = tmp / "home", tmp / "work"
    home.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    return home, work, tmp / "hook-log.jsonl"


def _hooked(event: str, matcher: str, handler: dict[str, Any]) -> dict[str, Any]:
    """A settings ``hooks`` table (Claude Code's and Gemini CLI's shape) with one command."""
    return {event: [{"matcher": matcher, "hooks": [{"type": "command", **handler}]}]}


def _host_run(run: dict[str, Any], work: Path, log: Path, seen: list[str]) -> HostRun:
    return HostRun(run["returncode"], run["stdout"], run["stderr"], run["seconds"], work,
                   _exchanges(log), seen)  # fmt: skip


def run_claude(
    tmp: Path, hook: list[str], tool: str, tool_input: dict[str, Any],
    permissions: dict[str, Any] | None = None, timeout: float = RUN_TIMEOUT,
) -> HostRun:  # fmt: skip
    """``claude -p`` whose model calls ``tool`` once, against a loopback Messages API."""
    home, work, log = _dirs(tmp)
    settings = tmp / "settings.json"
    handler = {"command": _tee_command(hook, log), "timeout": 30}
    settings.write_text(json.dumps({
        "permissions": permissions or {}, "hooks": _hooked("PreToolUse", "*", handler),
    }), encoding="utf-8")  # fmt: skip
    env = _env(home, ANTHROPIC_BASE_URL=FAKE_URL, ANTHROPIC_API_KEY="sk-ant-fake",
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1")  # fmt: skip
    argv = [str(host_binary("claude")), "-p", "Run the tool.", "--settings", str(settings),
            "--output-format", "json"]  # fmt: skip
    script = [ToolUse(tool, tool_input)]
    run = _run(tmp, argv, work, env, timeout, "anthropic", [vars(step) for step in script])
    seen = [_text(r.get("content")) for r in tool_results(run["requests"], script)]
    return _host_run(run, work, log, seen)


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return str(content)


def _gemini_turn(part: dict[str, Any]) -> str:
    """One line of a ``--fake-responses`` file: a streamed model turn made of ``part``."""
    candidate = {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
    turn = {"method": "generateContentStream", "response": [{"candidates": [candidate]}]}
    return json.dumps(turn) + "\n"


def run_gemini(
    tmp: Path, hook: list[str], tool: str, args: dict[str, Any], mode: str = "--yolo",
    timeout: float = RUN_TIMEOUT,
) -> HostRun:  # fmt: skip
    """``gemini -p`` replaying a scripted function call (``--fake-responses-non-strict``)."""
    home, work, log = _dirs(tmp)
    (home / ".gemini").mkdir(exist_ok=True)
    handler = {"name": "policyctl", "command": _tee_command(hook, log), "timeout": 30000}
    (home / ".gemini" / "settings.json").write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "hooks": _hooked("BeforeTool", ".*", handler),
    }), encoding="utf-8")  # fmt: skip
    replies = tmp / "replies.jsonl"
    call = {"functionCall": {"name": tool, "args": args}}
    replies.write_text(_gemini_turn(call) + _gemini_turn({"text": "All done."}), encoding="utf-8")
    # -m: without a model, the router's classifier would consume the first scripted reply.
    argv = [str(host_binary("gemini")), "-m", "gemini-2.5-flash",
            "--fake-responses-non-strict", str(replies), *mode.split(), "--skip-trust",
            "-p", "Run the tool.", "-o", "json"]  # fmt: skip
    env = _env(home, GEMINI_API_KEY="fake-key", NO_COLOR="1")
    run = _run(tmp, argv, work, env, timeout)
    seen = [line for line in run["stderr"].splitlines() if line.startswith("Error executing tool")]
    return _host_run(run, work, log, seen)


CODEX_MODEL = "gpt-5.5"  # a model Codex knows: its metadata offers apply_patch


def run_codex(
    tmp: Path, hook: list[str], call: Call, timeout: float = RUN_TIMEOUT,
    trust_hooks: bool = True,
) -> HostRun:  # fmt: skip
    """``codex exec`` whose model makes ``call`` once, against a loopback Responses API."""
    home, work, log = _dirs(tmp)
    codex_home = home / ".codex"
    codex_home.mkdir(exist_ok=True)
    (codex_home / "config.toml").write_text(
        f'model = "{CODEX_MODEL}"\nmodel_provider = "fake"\n\n'
        "[model_providers.fake]\n"
        f'name = "fake"\nbase_url = "{FAKE_URL}/v1"\nwire_api = "responses"\n'
        'env_key = "FAKE_OPENAI_KEY"\n\n'
        # Off: what would reach GitHub (plugin sync) and chatgpt.com (metrics). In the run's
        # network namespace they cannot, but waiting for them to fail costs seconds per run.
        "[features]\nplugins = false\nremote_plugin = false\n\n"
        "[analytics]\nenabled = false\n\n"
        '[otel]\nmetrics_exporter = "none"\n\n'
        '[[hooks.PreToolUse]]\nmatcher = "*"\n[[hooks.PreToolUse.hooks]]\n'
        f'type = "command"\ncommand = {json.dumps(_tee_command(hook, log))}\ntimeout = 30\n',
        encoding="utf-8",
    )
    # Hooks never reviewed in Codex's /hooks screen do not run; the flag trusts them for this
    # run only. No sandbox: bubblewrap needs namespaces a container may not grant.
    trust = ["--dangerously-bypass-hook-trust"] if trust_hooks else []
    argv = [str(host_binary("codex")), "exec", "--skip-git-repo-check", *trust,
            "--sandbox", "danger-full-access", "Run the tool."]  # fmt: skip
    env = _env(home, CODEX_HOME=str(codex_home), FAKE_OPENAI_KEY="fake-key")
    run = _run(tmp, argv, work, env, timeout, "responses", [vars(call)])
    seen = [str(o.get("output", "")) for o in tool_outputs(run["requests"])]
    return _host_run(run, work, log, seen)
