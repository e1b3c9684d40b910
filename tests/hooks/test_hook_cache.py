"""The compiled cache: a later call reads what the first compiled, and only while it holds."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hook_helpers import ROOT, SAMPLES

from policyctl.integrations.hosts.handler import HostOptions, handle
from policyctl.integrations.hosts.policyfile import load_for_hook
from policyctl.integrations.hosts.protocols import HOSTS

BASE = "catalog: claude-code\ntools:\n  profile: coding\n  deny: ['Bash(rm *)']\n"


def _write(tmp: Path, child_rule: str) -> Path:
    (tmp / "base.yaml").write_text(BASE, encoding="utf-8")
    policy = tmp / "policy.yaml"
    policy.write_text(f"extends: base.yaml\ntools:\n  ask: ['{child_rule}']\n", encoding="utf-8")
    return policy


def _verdict(policy_path: Path, cache: Path | None, command: str) -> tuple[str, bool]:
    loaded = load_for_hook(str(policy_path), cache)
    payload = {
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
    }
    reply = handle(payload, loaded.policy, HostOptions(HOSTS["claude-code"]))
    return json.loads(reply.stdout)["hookSpecificOutput"]["permissionDecision"], loaded.cached


def test_the_second_call_reads_the_cache_and_decides_alike(tmp_path: Path) -> None:
    policy, cache = _write(tmp_path, "Bash(git push *)"), tmp_path / "cache"
    assert _verdict(policy, cache, "git push") == ("ask", False)
    assert _verdict(policy, cache, "git push") == ("ask", True)
    assert _verdict(policy, cache, "rm -rf x") == ("deny", True)
    assert oct((cache).stat().st_mode & 0o777) == "0o700"


def test_a_changed_file_that_was_extended_is_compiled_again(tmp_path: Path) -> None:
    policy, cache = _write(tmp_path, "Bash(git push *)"), tmp_path / "cache"
    assert _verdict(policy, cache, "rm x") == ("deny", False)
    assert _verdict(policy, cache, "rm x") == ("deny", True)
    (tmp_path / "base.yaml").write_text(BASE.replace("Bash(rm *)", "Bash(rmdir *)"), "utf-8")
    assert _verdict(policy, cache, "rm x") == ("allow", False)


def test_a_changed_policy_file_is_compiled_again(tmp_path: Path) -> None:
    policy, cache = _write(tmp_path, "Bash(git push *)"), tmp_path / "cache"
    assert _verdict(policy, cache, "git push") == ("ask", False)
    _write(tmp_path, "Bash(git pull *)")
    assert _verdict(policy, cache, "git push") == ("allow", False)


@pytest.mark.parametrize("mode", [0o755, 0o770, 0o707])
def test_a_directory_others_can_reach_is_not_used(tmp_path: Path, mode: int) -> None:
    policy, cache = _write(tmp_path, "Bash(git push *)"), tmp_path / "cache"
    cache.mkdir()
    os.chmod(cache, mode)
    assert _verdict(policy, cache, "git push") == ("ask", False)
    assert _verdict(policy, cache, "git push") == ("ask", False)
    assert list(cache.iterdir()) == []


def test_a_damaged_entry_is_a_miss(tmp_path: Path) -> None:
    policy, cache = _write(tmp_path, "Bash(git push *)"), tmp_path / "cache"
    _verdict(policy, cache, "git push")
    (entry,) = cache.iterdir()
    entry.write_bytes(b"\x80\x05not a pickle")
    assert _verdict(policy, cache, "git push") == ("ask", False)
    assert _verdict(policy, cache, "git push") == ("ask", True)


def test_every_sample_decides_alike_from_the_cache_and_compiled_afresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # the samples name their policies relative to the checkout
    for path in sorted(SAMPLES.glob("*.json")):
        sample = json.loads(path.read_text(encoding="utf-8"))
        options = HostOptions(HOSTS[sample["host"]])
        fresh = load_for_hook(sample["policy"], None)
        load_for_hook(sample["policy"], tmp_path)
        cached = load_for_hook(sample["policy"], tmp_path)
        assert cached.cached and not fresh.cached
        one = handle(sample["stdin"], fresh.policy, options)
        two = handle(sample["stdin"], cached.policy, options)
        assert (one.stdout, one.exit_code) == (two.stdout, two.exit_code), path.name
