"""The reference tools decide again what they really touch (call rules, issue 14).

A symlink swapped after the gate decided (time of check, time of use) is caught at the open:
the file tools decide the real path of what the kernel opened. exec decides the argument
vector it starts, as a command line whose words are exactly the vector.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from callrules_runtime_helpers import RulesDecider, decider, environment, gate_with, rules

from policyctl.callrules import CallDecision
from policyctl.runtime import Approval, ToolCallEvent, make_builtin_tools
from policyctl.runtime.builtin_tools import command_line


class SwapAfterGate(RulesDecider):
    """Decides like the run, and re-points a symlink right after the gate's decision."""

    def __init__(self, base: RulesDecider, link: Path, new_target: Path) -> None:
        super().__init__(base.layers, base.env)
        self.link, self.new_target = link, new_target

    def decide_call(self, tool: str, args: Mapping[str, Any]) -> CallDecision:
        decision = super().decide_call(tool, args)
        if len(self.calls) == 1:
            self.link.unlink()
            self.link.symlink_to(self.new_target)
        return decision


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    for folder in ("public", "secrets"):
        (ws / folder).mkdir(parents=True)
    (ws / "public" / "notes.txt").write_text("public notes", encoding="utf-8")
    (ws / "secrets" / "key").write_text("s3cret", encoding="utf-8")
    return ws.resolve()


def file_rules(ws: Path, **lists: Any) -> RulesDecider:
    env = environment(ws)
    tools = ("read_file", "write_file", "edit_file", "list_dir")
    return decider(env, agent=[rules(t, env, **lists.get(t, {})) for t in tools])


DENY_SECRETS = {
    t: {"deny": [f"{t}(./secrets/)"]} for t in ("read_file", "write_file", "edit_file", "list_dir")
}


def gate_for(ws: Path, call_decider: RulesDecider, **kw: Any) -> Any:
    return gate_with(make_builtin_tools(ws), call_decider, **kw)


def test_a_symlink_swapped_after_the_gate_is_caught_at_the_open(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    link = ws / "link.txt"
    link.symlink_to(ws / "public" / "notes.txt")
    swap = SwapAfterGate(file_rules(ws, **DENY_SECRETS), link, ws / "secrets" / "key")
    out = asyncio.run(gate_for(ws, swap).call("read_file", {"path": "link.txt"}))
    assert out.veto is not None and out.veto.kind == "policy", out
    assert "open refused" in out.veto.reason and "read_file(./secrets/)" in out.veto.reason
    assert "s3cret" not in out.content()
    # the gate decided the named path, the tool the file it really opened
    assert [args["path"] for _, args in swap.calls] == ["link.txt", str(ws / "secrets" / "key")]


def test_without_a_swap_the_same_read_runs(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (ws / "link.txt").symlink_to(ws / "public" / "notes.txt")
    out = asyncio.run(
        gate_for(ws, file_rules(ws, **DENY_SECRETS)).call("read_file", {"path": "link.txt"})
    )
    assert out.ok and out.result == "public notes"


def test_a_folder_swapped_after_the_gate_stops_the_write_before_anything_is_created(
    tmp_path: Path,
) -> None:
    ws = workspace(tmp_path)
    out_dir = ws / "out"
    out_dir.symlink_to(ws / "public")
    swap = SwapAfterGate(file_rules(ws, **DENY_SECRETS), out_dir, ws / "secrets")
    gate = gate_for(ws, swap)
    result = asyncio.run(gate.call("write_file", {"path": "out/new.txt", "content": "x"}))
    assert result.veto is not None and result.veto.kind == "policy", result
    assert not (ws / "secrets" / "new.txt").exists()
    assert not (ws / "public" / "new.txt").exists()


def test_an_edit_through_a_swapped_folder_leaves_the_file_unchanged(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (ws / "docs").symlink_to(ws / "public")
    (ws / "public" / "key").write_text("s3cret-public", encoding="utf-8")
    swap = SwapAfterGate(file_rules(ws, **DENY_SECRETS), ws / "docs", ws / "secrets")
    args = {"path": "docs/key", "old_text": "s3cret", "new_text": "leaked"}
    out = asyncio.run(gate_for(ws, swap).call("edit_file", args))
    assert out.veto is not None and out.veto.kind == "policy", out
    assert (ws / "secrets" / "key").read_text(encoding="utf-8") == "s3cret"


def test_list_dir_decides_the_folder_it_opened(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (ws / "view").symlink_to(ws / "public")
    swap = SwapAfterGate(file_rules(ws, **DENY_SECRETS), ws / "view", ws / "secrets")
    out = asyncio.run(gate_for(ws, swap).call("list_dir", {"path": "view"}))
    assert out.veto is not None and "key" not in out.content()


def test_edit_replaces_exactly_one_occurrence(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    gate = gate_for(ws, file_rules(ws))
    notes = ws / "public" / "notes.txt"
    path = "public/notes.txt"
    edit = {"path": path, "old_text": "notes", "new_text": "pages"}
    assert asyncio.run(gate.call("edit_file", edit)).ok
    assert notes.read_text(encoding="utf-8") == "public pages"
    missing = asyncio.run(gate.call("edit_file", {**edit, "old_text": "absent"}))
    assert not missing.ok and "not found" in str(missing.result)
    notes.write_text("a a", encoding="utf-8")
    twice = asyncio.run(gate.call("edit_file", {"path": path, "old_text": "a", "new_text": "b"}))
    assert not twice.ok and "found 2 times" in str(twice.result)
    assert notes.read_text(encoding="utf-8") == "a a"


def test_a_symlink_in_the_name_place_is_never_written_through(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (ws / "public" / "evil.txt").symlink_to(ws / "secrets" / "key")
    gate = gate_for(ws, file_rules(ws))
    out = asyncio.run(gate.call("write_file", {"path": "public/evil.txt", "content": "x"}))
    assert not out.ok and "symlink" in str(out.result)
    out = asyncio.run(
        gate.call("edit_file", {"path": "public/evil.txt", "old_text": "s", "new_text": "x"})
    )
    assert not out.ok and "symlink" in str(out.result)
    assert (ws / "secrets" / "key").read_text(encoding="utf-8") == "s3cret"


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    os.mkfifo(ws / "public" / "pipe")
    gate = gate_for(ws, file_rules(ws))
    out = asyncio.run(asyncio.wait_for(gate.call("read_file", {"path": "public/pipe"}), 5))
    assert not out.ok


def test_an_approval_covers_the_open_only_when_it_opens_what_was_named(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (ws / "link.txt").symlink_to(ws / "secrets" / "key")
    asked: list[dict[str, Any]] = []

    async def approver(event: ToolCallEvent, reason: str) -> Approval:
        asked.append(event.params)
        return Approval.ONCE

    ask = {"read_file": {"ask": ["read_file(./secrets/)"]}}
    gate = gate_for(ws, file_rules(ws, **ask), approver=approver)
    assert asyncio.run(gate.call("read_file", {"path": "secrets/key"})).ok
    assert [a["path"] for a in asked] == ["secrets/key"]  # the open is the call: not asked again
    asked.clear()
    out = asyncio.run(gate.call("read_file", {"path": "link.txt"}))
    assert out.ok and out.result == "s3cret"
    # through a symlink: the person is asked about the file really opened, too
    assert [a["path"] for a in asked] == ["link.txt", str(ws / "secrets" / "key")]


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["git", "status"], "'git' status"),
        (["echo", "a b", "$HOME"], "'echo' 'a b' '$HOME'"),
        (["FOO=1", "rm"], "'FOO=1' rm"),
        (["it's"], "'it'\"'\"'s'"),
    ],
)
def test_command_line_has_exactly_the_vector_words(argv: list[str], line: str) -> None:
    assert command_line(argv) == line


def test_exec_decides_the_command_line_it_starts(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    env = environment(ws)
    d = decider(env, agent=[rules("exec", env, allow=["exec(echo *)"], deny=["exec(rm *)"])])
    gate = gate_for(ws, d)
    ok = asyncio.run(gate.call("exec", {"command": "echo hi"}))
    assert ok.ok and ok.result["stdout"] == "hi\n"
    for line in ("sh -c 'rm -rf public'", "echo x; rm -rf public", "make"):
        out = asyncio.run(gate.call("exec", {"command": line}))
        assert out.veto is not None and out.veto.kind == "policy", line
    assert (ws / "public").is_dir()
    # the gate's decision and exec's own, just before it starts: the same text
    assert [args["command"] for _, args in d.calls[:2]] == ["echo hi", "echo hi"]


def test_a_write_into_new_folders_through_a_swapped_folder_creates_nothing(
    tmp_path: Path,
) -> None:
    ws = workspace(tmp_path)
    out_dir = ws / "out"
    out_dir.symlink_to(ws / "public")
    swap = SwapAfterGate(file_rules(ws, **DENY_SECRETS), out_dir, ws / "secrets")
    args = {"path": "out/new/deep/x.txt", "content": "x"}
    result = asyncio.run(gate_for(ws, swap).call("write_file", args))
    assert result.veto is not None and result.veto.kind == "policy", result
    assert not (ws / "secrets" / "new").exists() and not (ws / "public" / "new").exists()
    made = asyncio.run(gate_for(ws, file_rules(ws)).call("write_file", args))
    assert made.ok and (ws / "secrets" / "new" / "deep" / "x.txt").read_text() == "x"


def test_edit_of_a_missing_folder_creates_nothing(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    args = {"path": "nowhere/x.txt", "old_text": "a", "new_text": "b"}
    out = asyncio.run(gate_for(ws, file_rules(ws)).call("edit_file", args))
    assert not out.ok and not (ws / "nowhere").exists()
