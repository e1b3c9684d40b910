"""Contract tests: documented and recorded hook payloads replayed through the real
`policyctl hook` process, each reply compared with the one the host must read.

Samples live in tests/data/hosts/samples/ (one JSON file each: host, policy, extra flags,
the payload on stdin, and the expected exit code, stdout and stderr). Regenerate the
expected parts after a deliberate change with `REGEN_HOST_SAMPLES=1 pytest tests/hooks`,
then review the diff. Payloads recorded from the real host programs
(tests/data/hosts/recorded/) are replayed too: every one must get a reply its host accepts.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hook_helpers import RECORDED, SAMPLES, run_hook

SAMPLE_FILES = sorted(SAMPLES.glob("*.json"))


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hook-cache")


def _argv(sample: dict[str, Any], cache: Path) -> list[str]:
    return [
        sample["host"],
        "--policy",
        sample["policy"],  # relative to the checkout: reasons quote it as given
        "--cache-dir",
        str(cache),
        *sample["args"],
    ]


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.stem)
def test_a_sample_payload_gets_its_recorded_reply(path: Path, cache_dir: Path) -> None:
    sample = json.loads(path.read_text(encoding="utf-8"))
    run = run_hook(_argv(sample, cache_dir), sample["stdin"])
    got = {"exit": run.exit_code, "stdout": run.reply, "stderr": run.stderr}
    if os.environ.get("REGEN_HOST_SAMPLES"):
        sample["expect"] = got
        text = json.dumps(sample, indent=2, ensure_ascii=False) + "\n"
        path.write_text(text, encoding="utf-8")
    assert got == sample["expect"]


def test_every_host_and_outcome_has_samples() -> None:
    names = {p.stem for p in SAMPLE_FILES}
    for host in ("claude-code", "gemini-cli", "codex"):
        mine = {n for n in names if n.startswith(host + "-")}
        assert any(n.endswith("-denied") for n in mine), host
        assert any(n.endswith("-allowed") or n.endswith("-silent") for n in mine), host
    assert any("ask" in n for n in names if n.startswith("claude-code-"))


def _accepted(host: str, event: str, run_exit: int, reply: Any) -> bool:
    """Whether the host reads this reply as a decision (the shape its protocol defines)."""
    if run_exit != 0:
        return False
    if host == "codex":
        return reply is None or reply["hookSpecificOutput"]["permissionDecision"] == "deny"
    if host == "gemini-cli" and event == "BeforeToolSelection":
        return isinstance(reply["hookSpecificOutput"]["toolConfig"]["allowedFunctionNames"], list)
    if host == "gemini-cli":
        return reply["decision"] in ("allow", "deny", "ask") and isinstance(reply["reason"], str)
    out = reply["hookSpecificOutput"]
    return out["hookEventName"] == event and out["permissionDecision"] in ("allow", "deny", "ask")


RECORDED_FILES = sorted(RECORDED.glob("*.json")) if RECORDED.is_dir() else []


@pytest.mark.skipif(not RECORDED_FILES, reason="no payloads recorded from the real hosts yet")
@pytest.mark.parametrize("path", RECORDED_FILES, ids=lambda p: p.stem)
def test_a_payload_recorded_from_the_real_host_gets_a_reply_it_accepts(
    path: Path, cache_dir: Path
) -> None:
    record = json.loads(path.read_text(encoding="utf-8"))
    host = record["host"]
    policy = "tests/data/hosts/codex-policy.yaml" if host == "codex" else "examples/hosts-team.yaml"
    sample = {"host": host, "policy": policy, "args": []}
    run = run_hook(_argv(sample, cache_dir), record["stdin"])
    assert _accepted(host, record["event"], run.exit_code, run.reply), (run, record["stdin"])
