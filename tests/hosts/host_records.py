"""Recorded host payloads: what each pinned host sent its hook and what it did with the answer.

Files ``tests/data/hosts/recorded/<host>-<event>-<case>.json`` are contract data for
``policyctl hook``: a test replays their ``stdin`` into the adapter. The end-to-end tests compare
each live exchange with its file, so a host upgrade that changes the payload shows up as a
diff; ``POLICYCTL_REGEN_HOST_RECORDS=1 pytest tests/hosts`` rewrites them. Values that differ
run to run (the temporary directory, session and turn ids, timestamps, transcript paths) are
replaced by stable placeholders.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

RECORDED = Path(__file__).resolve().parent.parent / "data" / "hosts" / "recorded"
PACKAGE = Path(__file__).resolve().parent / "npm" / "package.json"
PACKAGES = {
    "claude-code": "@anthropic-ai/claude-code",
    "gemini-cli": "@google/gemini-cli",
    "codex": "@openai/codex",
}
_PLACEHOLDER_KEYS = {"session_id", "turn_id", "prompt_id", "timestamp", "transcript_path"}
REPO = Path(__file__).resolve().parent.parent.parent
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def pinned_version(host: str) -> str:
    return str(json.loads(PACKAGE.read_text(encoding="utf-8"))["dependencies"][PACKAGES[host]])


def scrub(value: Any, tmp: Path) -> Any:
    """``value`` with run-specific parts replaced: ``<tmp>`` for the test's directory,
    ``<repo>`` for this checkout, ``<session_id>`` and the like for the keys that carry ids
    and times."""
    if isinstance(value, dict):
        return {k: f"<{k}>" if k in _PLACEHOLDER_KEYS else scrub(v, tmp) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, tmp) for v in value]
    if isinstance(value, str):
        return _UUID.sub(
            "<uuid>",
            value.replace(str(tmp.resolve()), "<tmp>")
            .replace(str(tmp), "<tmp>")
            .replace(str(REPO), "<repo>"),
        )
    return value


def check_record(
    host: str, event: str, case: str, exchange: dict[str, Any], outcome: dict[str, Any], tmp: Path
) -> None:
    """Compare one live exchange with its recorded file (or write it when regenerating)."""
    answer = exchange["stdout"].strip()
    record = {
        "host": host,
        "version": pinned_version(host),
        "event": event,
        "stdin": scrub(exchange["stdin"], tmp),
        "hook_stdout": scrub(json.loads(answer), tmp) if answer else None,
        "hook_exit": exchange["exit"],
        "host_did": scrub(outcome, tmp),
    }
    path = RECORDED / f"{host}-{event}-{case}.json"
    if os.environ.get("POLICYCTL_REGEN_HOST_RECORDS"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return
    assert path.exists(), (
        f"{path} is missing: run POLICYCTL_REGEN_HOST_RECORDS=1 pytest tests/hosts"
    )
    assert _comparable(record) == _comparable(json.loads(path.read_text(encoding="utf-8"))), (
        f"{host} {event} {case} no longer matches {path.name}; if the host changed on purpose, "
        "regenerate with POLICYCTL_REGEN_HOST_RECORDS=1"
    )


def _comparable(record: dict[str, Any]) -> dict[str, Any]:
    """The record without the hook's free-text reason: its wording is the adapter's to change;
    the payload, the decision and what the host did with it are the contract."""
    answer = record.get("hook_stdout") or {}
    specific = answer.get("hookSpecificOutput", {})
    decided = specific.get("permissionDecision", answer.get("decision"))
    return {**{k: v for k, v in record.items() if k != "hook_stdout"}, "decision": decided}
