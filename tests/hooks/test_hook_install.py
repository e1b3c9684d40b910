"""`policyctl hook install` merges and never clobbers; `policyctl hook doctor` finds the holes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from policyctl.cli.main import main
from policyctl.integrations.hosts.doctor import check_settings, check_version, host_tool_names
from policyctl.integrations.hosts.install import SettingsError, merged
from policyctl.integrations.hosts.protocols import HOSTS

POLICY = str(Path(__file__).resolve().parents[2] / "examples" / "hosts-team.yaml")
THEIRS = {"type": "command", "command": "./lint.sh"}


def _install(tmp: Path, host: str, *flags: str) -> int:
    return main(["hook", "install", host, "--policy", POLICY, "--command", "policyctl", *flags])


@pytest.mark.parametrize(
    ("host", "path", "events"),
    [
        ("claude-code", ".claude/settings.json", ["PreToolUse"]),
        ("gemini-cli", ".gemini/settings.json", ["BeforeTool", "BeforeToolSelection"]),
        ("codex", ".codex/hooks.json", ["PreToolUse"]),
    ],
)
def test_install_keeps_every_other_setting_and_a_second_install_changes_nothing(
    host: str, path: str, events: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = tmp_path / path
    settings.parent.mkdir()
    event = events[0]
    theirs = {"model": "x", "hooks": {event: [{"matcher": "Bash", "hooks": [THEIRS]}]}}
    settings.write_text(json.dumps(theirs), encoding="utf-8")
    assert _install(tmp_path, host) == 0
    after = json.loads(settings.read_text())
    assert after["model"] == "x" and after["hooks"][event][0] == theirs["hooks"][event][0]
    for name in events:
        ours = after["hooks"][name][-1]["hooks"][0]
        assert ours["command"].startswith(f"policyctl hook {host} --policy {POLICY}")
    text = settings.read_text()
    assert _install(tmp_path, host) == 0
    assert settings.read_text() == text
    assert (
        host == "claude-code"
        or "matcher" not in after["hooks"][event][-1]
        or (after["hooks"][event][-1]["matcher"] == ".*")
    )


def test_a_dry_run_prints_a_diff_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _install(tmp_path, "claude-code", "--dry-run") == 0
    out = capsys.readouterr().out
    assert out.startswith("--- .claude/settings.json (now)\n+++ .claude/settings.json (after")
    assert '+    "PreToolUse": [' in out
    assert not (tmp_path / ".claude").exists()


def test_a_broken_settings_file_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude/settings.json").write_text('{"hooks": [1,}', encoding="utf-8")
    assert _install(tmp_path, "claude-code") == 2
    err = capsys.readouterr().err
    assert err.startswith(".claude/settings.json:1:14: PC370 host settings unreadable")
    assert "fix: correct the file by hand; nothing was changed" in err
    assert (tmp_path / ".claude/settings.json").read_text() == '{"hooks": [1,}'


@pytest.mark.parametrize("bad", [[], {"hooks": []}, {"hooks": {"PreToolUse": {"x": 1}}}])
def test_shapes_the_host_would_not_read_are_refused(bad: Any) -> None:
    with pytest.raises(SettingsError):
        merged(bad, HOSTS["claude-code"], "policyctl hook claude-code --policy p", 10)


def test_no_ask_is_written_into_the_command_and_taken_back_by_a_later_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # docs/hosts.md: settings for headless runs, where an ask would wait for no one
    monkeypatch.chdir(tmp_path)
    settings = tmp_path / ".gemini" / "settings.json"
    assert _install(tmp_path, "gemini-cli", "--no-ask") == 0
    hooks = json.loads(settings.read_text())["hooks"]
    commands = [
        h["command"] for e in ("BeforeTool", "BeforeToolSelection") for h in hooks[e][-1]["hooks"]
    ]
    assert len(commands) == 2 and all(c.endswith(" --warm --no-ask") for c in commands)
    assert _install(tmp_path, "gemini-cli") == 0
    hooks = json.loads(settings.read_text())["hooks"]
    assert [len(hooks[e]) for e in ("BeforeTool", "BeforeToolSelection")] == [1, 1]
    assert "--no-ask" not in settings.read_text()


def test_an_earlier_install_is_updated_in_place_not_duplicated() -> None:
    host = HOSTS["claude-code"]
    first = merged({}, host, "policyctl hook claude-code --policy /a.yaml", 10)
    second = merged(first, host, "policyctl hook claude-code --policy /b.yaml", 20)
    groups = second["hooks"]["PreToolUse"]
    assert len(groups) == 1 and groups[0]["hooks"] == [
        {"type": "command", "command": "policyctl hook claude-code --policy /b.yaml", "timeout": 20}
    ]


def test_ours_leaves_a_group_it_shares_with_a_narrower_matcher() -> None:
    host = HOSTS["claude-code"]
    ours = {"type": "command", "command": "policyctl hook claude-code --policy /a.yaml"}
    shared = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [THEIRS, ours]}]}}
    after = merged(shared, host, ours["command"], 10)["hooks"]["PreToolUse"]
    assert after[0] == {"matcher": "Bash", "hooks": [THEIRS]}
    assert after[1]["matcher"] == "*" and after[1]["hooks"][0]["command"] == ours["command"]


# -- doctor ---------------------------------------------------------------------------------


def _settings(matcher: Any, timeout: Any = 10, **extra: Any) -> dict[str, Any]:
    handler = {"type": "command", "command": "policyctl hook claude-code --policy p"}
    if timeout is not None:
        handler["timeout"] = timeout
    group: dict[str, Any] = {"hooks": [handler]}
    if matcher is not None:
        group["matcher"] = matcher
    return {"hooks": {"PreToolUse": [group]}, **extra}


def _codes(settings: dict[str, Any], host: str = "claude-code") -> list[str]:
    return [f.code for f in check_settings(HOSTS[host], [("s.json", settings)])]


@pytest.mark.parametrize(
    ("settings", "codes"),
    [
        (_settings("*"), []),
        (_settings(None), []),
        (_settings(""), []),
        (_settings(".*"), []),
        (_settings("Bash|Edit|Write"), ["PC371"]),
        (_settings("Bash"), ["PC371"]),
        (_settings("mcp__.*"), ["PC371"]),
        (_settings("*", timeout=1), ["PC372"]),
        (_settings("*", disableAllHooks=True), ["PC373"]),
        ({"hooks": {"PostToolUse": []}}, ["PC371"]),
        ({}, ["PC371"]),
    ],
)
def test_doctor_findings(settings: dict[str, Any], codes: list[str]) -> None:
    assert _codes(settings) == codes


def test_doctor_names_the_tools_a_matcher_misses() -> None:
    (finding,) = check_settings(HOSTS["claude-code"], [("s.json", _settings("Bash|Read"))])
    missed = finding.message.split(": ", 1)[1].split(", ")
    assert "Write" in missed and "mcp__server__tool" in missed
    assert "Bash" not in missed and "Read" not in missed


def test_doctor_reads_gemini_timeouts_in_milliseconds_and_its_off_switch() -> None:
    host = HOSTS["gemini-cli"]
    handler = {"type": "command", "command": "policyctl hook gemini-cli --policy p"}
    ok = {"hooks": {"BeforeTool": [{"matcher": ".*", "hooks": [{**handler, "timeout": 5000}]}]}}
    assert check_settings(host, [("s", ok)]) == []
    short = {"hooks": {"BeforeTool": [{"matcher": ".*", "hooks": [{**handler, "timeout": 900}]}]}}
    assert [f.code for f in check_settings(host, [("s", short)])] == ["PC372"]
    off = {**ok, "hooksConfig": {"enabled": False}}
    assert [f.code for f in check_settings(host, [("s", off)])] == ["PC373"]


def test_doctor_knows_the_hosts_tool_names_as_they_spell_them() -> None:
    names = host_tool_names(HOSTS["claude-code"])
    assert {"Bash", "Read", "Agent", "Task", "mcp__server__tool"} <= set(names)
    assert "run_shell_command" in host_tool_names(HOSTS["gemini-cli"])


@pytest.mark.parametrize(
    ("version", "codes"),
    [("2.1.75 (Claude Code)", []), ("2.1.76 (Claude Code)", ["PC374"]), ("2.1.328", ["PC374"])],
)
def test_doctor_warns_of_versions_with_known_holes(version: str, codes: list[str]) -> None:
    assert [f.code for f in check_version(HOSTS["claude-code"], version)] == codes


def test_install_then_doctor_is_clean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", str(tmp_path))  # no host binary: the version is not asked
    for host in ("claude-code", "gemini-cli", "codex"):
        assert _install(tmp_path, host) == 0
        assert main(["hook", "doctor", host]) == 0, capsys.readouterr()
    assert "fires for every tool" in capsys.readouterr().out
