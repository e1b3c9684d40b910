"""F14: look-alike (non-ASCII) scope ids are refused with their location (semantics 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from policyctl import load_policy
from policyctl.diagnostics import PolicyError

TEXT = (
    'tools:\n  profile: coding\n  byProvider:\n    "open\u0430i": {deny: [exec]}\n'
    'agents:\n  entries:\n    "c\u043eder": {tools: {deny: [exec]}}\n'
    'channels:\n  "sl\u0430ck":\n    accounts:\n      "w\u043e":\n        groups:\n'
    '          "G\u043e": {tools: {deny: [exec]}}\n'
    '  telegram:\n    groups:\n      "C\u200b2": {tools: {deny: [exec]}}\n'
)


def test_lookalike_scope_ids_are_errors_with_their_location(tmp_path: Path) -> None:
    path = tmp_path / "cyr.yaml"
    path.write_text(TEXT, encoding="utf-8")
    with pytest.raises(PolicyError) as err:
        load_policy(path)
    found = {
        (d.source.line, d.source.column)
        for d in err.value.diagnostics
        if d.code == "PC301" and d.source is not None
    }
    assert found == {(4, 5), (7, 5), (9, 3), (11, 7), (13, 11), (16, 7)}
    assert all("\u043e" not in d.message for d in err.value.diagnostics)


def test_ascii_ids_with_punctuation_and_spaces_still_load(tmp_path: Path) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text(
        "tools: {profile: coding}\nchannels:\n  matrix:\n    groups:\n"
        '      "!room:example.org": {tools: {deny: [exec]}}\n'
        '      "team chat #1": {tools: {deny: [exec]}}\n',
        encoding="utf-8",
    )
    load_policy(path)


@pytest.mark.parametrize(
    "key",
    [
        "id:\u0430lice",  # Cyrillic а: matches no sender, while alice gets the wider rules
        "\u0430lice",  # untyped keys are ids too
        "username:@b\u043eb",
        "e164:+1555\u200b0100",
        "channel:sl\u0430ck:U1",
        "name:Jos\u00e9\u202e",  # a display name may be any script, not invisible characters
    ],
)
def test_lookalike_sender_keys_are_errors_with_their_location(tmp_path: Path, key: str) -> None:
    path = tmp_path / "senders.yaml"
    path.write_text(
        f'tools:\n  profile: coding\n  toolsBySender:\n    "{key}": {{deny: [exec]}}\n',
        encoding="utf-8",
    )
    with pytest.raises(PolicyError) as err:
        load_policy(path)
    found = [d for d in err.value.diagnostics if d.code == "PC301"]
    assert [(d.source.line, d.source.column) for d in found if d.source] == [(4, 5)]


def test_display_names_in_any_script_are_sender_keys(tmp_path: Path) -> None:
    path = tmp_path / "names.yaml"
    path.write_text(
        'tools:\n  toolsBySender:\n    "name:José": {deny: [exec]}\n'
        '    "name:Анна": {deny: [exec]}\n',
        encoding="utf-8",
    )
    assert len(load_policy(path).global_tools.senders.policies) == 2  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "first,second",
    [
        ("coder", "c0der"),
        ("coder", "co-der"),
        ("ops_bot", "ops.bot"),
        ("modem", "rnodem"),
        ("admin1", "adminl"),
    ],
)
def test_ascii_lookalike_agent_ids_are_errors(tmp_path: Path, first: str, second: str) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(
        f"agents:\n  entries:\n    {first}: {{tools: {{deny: [exec]}}}}\n    {second}: {{}}\n",
        encoding="utf-8",
    )
    with pytest.raises(PolicyError) as err:
        load_policy(path)
    found = [d for d in err.value.diagnostics if d.code == "PC312"]
    assert [(d.source.line, d.source.column) for d in found if d.source] == [(4, 5)]
    assert first in found[0].message and second in found[0].message


def test_lookalike_group_channel_and_account_ids_are_errors(tmp_path: Path) -> None:
    # group and account ids are matched as written: `C1` and `c1` are two groups, and a
    # reviewer reads them as one
    path = tmp_path / "groups.yaml"
    path.write_text(
        "channels:\n"
        "  slack:\n"
        "    groups:\n      C1: {tools: {deny: [exec]}}\n      c1: {}\n"
        "    accounts:\n      Work: {}\n      work: {}\n"
        "  s1ack: {}\n",
        encoding="utf-8",
    )
    with pytest.raises(PolicyError) as err:
        load_policy(path)
    found = {d.path for d in err.value.diagnostics if d.code == "PC312"}
    assert found == {"channels.slack.groups.c1", "channels.slack.accounts.work", "channels.s1ack"}


def test_a_lookalike_added_by_an_extending_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text(
        "agents:\n  entries:\n    coder: {tools: {deny: [exec]}}\n", encoding="utf-8"
    )
    child = tmp_path / "child.yaml"
    child.write_text("extends: base.yaml\nagents:\n  entries:\n    c0der: {}\n", encoding="utf-8")
    with pytest.raises(PolicyError) as err:
        load_policy(child)
    assert [d.code for d in err.value.diagnostics if d.code == "PC312"] == ["PC312"]


def test_distinct_ids_are_not_lookalikes(tmp_path: Path) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text(
        "agents:\n  entries:\n    coder: {}\n    reviewer: {}\n    agent1: {}\n    agent2: {}\n"
        "channels:\n  slack:\n    groups:\n      C1: {}\n      C2: {}\n",
        encoding="utf-8",
    )
    load_policy(path)
