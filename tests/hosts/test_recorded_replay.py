"""Every recorded host payload, replayed into ``policyctl hook``, gets the answer the host got.

The records in tests/data/hosts/recorded/ come from the real hosts (test_*_e2e.py); this replay
needs no host, so a change to the adapter that would answer a real payload differently fails
here first, with the payload's file named.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from host_hooks import policyctl_hook
from host_records import RECORDED


def _answered_by_policyctl(path: Path) -> bool:
    record = json.loads(path.read_text(encoding="utf-8"))
    # The stand-in cases record what a host does without policyctl; Codex allows by silence.
    return "policyctl" in json.dumps(record["hook_stdout"]) or (
        record["host"] == "codex" and record["hook_stdout"] is None
    )


RECORDS = sorted(p for p in RECORDED.glob("*.json") if _answered_by_policyctl(p))


def _decision(answer: dict[str, Any] | None) -> str | None:
    answer = answer or {}
    return answer.get("hookSpecificOutput", {}).get("permissionDecision", answer.get("decision"))


def test_there_are_records_for_every_host() -> None:
    hosts = {json.loads(p.read_text(encoding="utf-8"))["host"] for p in RECORDS}
    assert hosts == {"claude-code", "gemini-cli", "codex"}


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.stem)
def test_a_recorded_payload_gets_the_recorded_answer(path: Path, tmp_path: Path) -> None:
    record = json.loads(path.read_text(encoding="utf-8"))
    payload = json.dumps(record["stdin"]).replace("<tmp>", str(tmp_path))
    done = subprocess.run(
        policyctl_hook(record["host"], tmp_path), input=payload, capture_output=True, text=True
    )
    assert done.returncode == record["hook_exit"], done.stderr
    answer = json.loads(done.stdout) if done.stdout.strip() else None
    assert _decision(answer) == _decision(record["hook_stdout"]), done.stdout
