"""The OpenClaw import of Slack channel policies is never looser than OpenClaw.

OpenClaw picks a Slack run's channel map from its account (the account's own `channels`
replace the top-level ones), a run that names no account from the default account, and
matches channel names as well as ids. Each row is a config and a run: the imported policy must
refuse at least the tools OpenClaw's reading refuses, or the import must refuse (exit 1,
nothing written) with the code and the place.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from policyctl import RunContext, load_policy, resolve
from policyctl.cli.main import main

DENY_EXEC = {"tools": {"deny": ["exec"]}}
DENY_EDIT = {"tools": {"deny": ["edit"]}}


def _import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], slack: dict[str, Any]
) -> tuple[int, Path, str]:
    src = tmp_path / "openclaw.json"
    src.write_text(json.dumps({"channels": {"slack": slack}}, indent=2), encoding="utf-8")
    out = tmp_path / "out.yaml"
    rc = main(["import", str(src), "-o", str(out)])
    return rc, out, capsys.readouterr().err


def _allowed(path: Path, key: str, account: str | None = None) -> tuple[str, ...]:
    ctx = RunContext(session_key=key, account=account)
    return resolve(load_policy(str(path)), ctx, require_tools=False).allowed


# (config, session key of the run, account the run names, tool OpenClaw refuses there)
NARROW = [
    # an account's own channels replace the top-level ones for its runs
    (
        {
            "channels": {"C1": DENY_EXEC},
            "accounts": {"default": {"botToken": "x"}, "work": {"channels": {"C1": DENY_EDIT}}},
        },
        "agent:main:slack:work:channel:C1",
        None,
        "edit",
    ),
    # an account with no channels of its own gets the top-level ones
    (
        {"channels": {"C1": DENY_EXEC}, "accounts": {"work": {"botToken": "x"}}},
        "agent:main:slack:work:channel:C1",
        None,
        "exec",
    ),
    # the wildcard entry of the account's map applies to its other channels
    (
        {"accounts": {"work": {"channels": {"*": DENY_EXEC}}}},
        "agent:main:slack:work:channel:C7",
        None,
        "exec",
    ),
    # a run that names no account: the only account's channels (no top-level map), copied
    (
        {"accounts": {"work": {"channels": {"C1": DENY_EXEC}}}},
        "agent:main:slack:channel:C1",
        None,
        "exec",
    ),
    # ... and the account defaultAccount names
    (
        {
            "defaultAccount": "home",
            "accounts": {"work": {"botToken": "x"}, "home": {"channels": {"*": DENY_EXEC}}},
        },
        "agent:main:slack:channel:C1",
        None,
        "exec",
    ),
]


@pytest.mark.parametrize(("slack", "key", "account", "refused"), NARROW)
def test_an_imported_slack_run_refuses_what_openclaw_refuses(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    slack: dict[str, Any],
    key: str,
    account: str | None,
    refused: str,
) -> None:
    rc, out, err = _import(tmp_path, capsys, slack)
    assert rc == 0, err
    assert refused not in _allowed(out, key, account)


REFUSED = [
    # names never meet the id of a session key: the channel would get a looser policy
    ({"channels": {"#general": DENY_EXEC}}, "PC461", "channels.slack.channels.#general"),
    ({"channels": {"general": DENY_EXEC}}, "PC461", "channels.slack.channels.general"),
    (
        {"accounts": {"work": {"channels": {"ops-room": DENY_EXEC}}}},
        "PC461",
        "channels.slack.accounts.work.channels.ops-room",
    ),
    # a default account with channels of its own next to a different top-level map
    (
        {
            "channels": {"C1": DENY_EDIT},
            "accounts": {"default": {"channels": {"C1": DENY_EXEC}}},
        },
        "PC462",
        "channels.slack.accounts.default.channels",
    ),
    # no defaultAccount, no account called default: the first account may be the default
    (
        {
            "channels": {"C1": DENY_EDIT},
            "accounts": {"b": {"botToken": "x"}, "a": {"channels": {"C1": DENY_EXEC}}},
        },
        "PC462",
        "channels.slack.accounts.a.channels",
    ),
]


@pytest.mark.parametrize(("slack", "code", "where"), REFUSED)
def test_a_slack_map_policyctl_cannot_match_is_refused(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    slack: dict[str, Any],
    code: str,
    where: str,
) -> None:
    rc, out, err = _import(tmp_path, capsys, slack)
    assert rc == 1 and not out.exists(), err
    line = next(x for x in err.splitlines() if f"error {code}" in x)
    assert str(tmp_path / "openclaw.json") in line  # located: file:line:col
    assert "fix:" in line
    last = where.rsplit(".", 1)[-1]
    assert last in line


def test_a_default_account_without_channels_of_its_own_is_no_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    slack = {
        "defaultAccount": "work",
        "channels": {"C1": DENY_EXEC},
        "accounts": {"work": {"botToken": "x"}, "home": {"channels": {"C1": DENY_EDIT}}},
    }
    rc, out, err = _import(tmp_path, capsys, slack)
    assert rc == 0, err
    assert "exec" not in _allowed(out, "agent:main:slack:channel:C1")
    assert "edit" not in _allowed(out, "agent:main:slack:home:channel:C1")
