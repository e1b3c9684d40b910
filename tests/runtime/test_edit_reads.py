"""The runtime's edit tool reveals the file it edits ("not found", "found N times"), so the
catalog relates it to the read tool (`[[relations]]`: edit_file acts as read_file): a file the
run may not read cannot be probed through no-op edits, at the gate and at the open."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from test_call_rules_entrypoints import runtime_for

from policyctl.context import RunContext

POLICY = """\
catalog: nanobot
tools:
  deny: ["read_file(./secrets/)"]
"""


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "secrets").mkdir(parents=True)
    (ws / "secrets" / "key").write_text("s3cret", encoding="utf-8")
    (ws / "notes.txt").write_text("buy milk", encoding="utf-8")
    return ws.resolve()


def edit(ws: Path, path: str, old: str, new: str = "x", text: str = POLICY) -> Any:
    runtime = runtime_for(ws, text)
    args = {"path": path, "old_text": old, "new_text": new}
    return asyncio.run(runtime.run_skill_command(RunContext(), "edit_file", args))


def test_an_edit_of_an_unreadable_file_is_refused_before_it_answers(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    for old in ("s3cret", "absent", "s"):  # found once, not found, found N times
        out = edit(ws, "secrets/key", old)
        assert out.veto is not None and out.veto.kind == "policy", out
        assert "read_file(./secrets/)" in out.veto.reason
        assert "not found" not in out.content() and "times" not in out.content()
    assert (ws / "secrets" / "key").read_text(encoding="utf-8") == "s3cret"


def test_an_edit_of_a_readable_file_runs(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    out = edit(ws, "notes.txt", "milk", "bread")
    assert out.ok, out
    assert (ws / "notes.txt").read_text(encoding="utf-8") == "buy bread"
    missing = edit(ws, "notes.txt", "absent")
    assert missing.veto is None and "not found" in missing.content()


def test_a_symlink_to_an_unreadable_file_is_refused_at_the_open(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (ws / "link.txt").symlink_to(ws / "secrets" / "key")
    out = edit(ws, "link.txt", "absent")
    assert out.veto is not None and out.veto.kind == "policy", out
    assert "not found" not in out.content()


def test_an_edit_without_the_read_tool_in_the_run_is_refused(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    out = edit(ws, "notes.txt", "absent", text="catalog: nanobot\ntools:\n  deny: [read_file]\n")
    assert out.veto is not None and out.veto.kind == "policy", out
    assert "not found" not in out.content()
    assert "read_file" in out.veto.reason


def test_the_refusal_says_which_tool_decided_and_on_which_file(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    args = {"path": "secrets/key", "old_text": "absent", "new_text": "x"}
    shown = {}
    for level in ("minimal", "layer", "full"):
        runtime = runtime_for(ws, POLICY, refusal_detail=level)
        out = asyncio.run(runtime.run_skill_command(RunContext(), "edit_file", args))
        assert out.veto is not None
        shown[level] = out.veto.reason
    assert "read_file" not in shown["minimal"]
    assert "a file of this edit_file call is decided as a read_file call" in shown["layer"]
    assert str(ws / "secrets" / "key") not in shown["layer"]  # the resolved path: full only
    assert (
        f'edit_file\'s file "{ws / "secrets" / "key"}" is decided as a read_file call'
        in shown["full"]
    )
