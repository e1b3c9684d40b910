"""Everyday command-line friction: one spelling per flag meaning, one help layout."""

from __future__ import annotations

import argparse
import json

import pytest
from conftest import EXAMPLES

from policyctl.cli.main import build_parser, main


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@pytest.mark.parametrize("name", sorted(_subparsers()))
def test_every_subcommand_help_says_examples(name: str) -> None:
    epilog = _subparsers()[name].epilog or ""
    assert epilog.startswith("examples:\n"), f"policyctl {name} --help: {epilog[:20]!r}"
    assert len([line for line in epilog.splitlines()[1:] if line.strip()]) >= 2


@pytest.mark.parametrize("command", ["resolve", "simulate"])
def test_tool_flag_is_refused_where_it_used_to_add_a_tool(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = ["--calls", "nothing.jsonl"] if command == "simulate" else []
    with pytest.raises(SystemExit) as exc:
        main([command, str(EXAMPLES / "team.yaml"), *extra, "--tool", "deploy"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--add-tool deploy" in err and "policyctl explain FILE --tool NAME" in err


def test_add_tool_adds_to_the_inventory_under_resolve(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["resolve", str(EXAMPLES / "team.yaml"), "--add-tool", "lookup@crm", "--format", "json"]
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert "lookup" in data["allowed"] or any(r["tool"] == "lookup" for r in data["removed"])


def test_explain_tool_still_asks_about_a_tool(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["explain", str(EXAMPLES / "team.yaml"), "--agent", "coder", "--tool", "exec"])
    assert code == 0
    assert capsys.readouterr().out.startswith("exec: ")
