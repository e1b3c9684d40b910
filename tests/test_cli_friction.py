"""Everyday command-line friction: one spelling per flag meaning, one help layout."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES, ROOT

from policyctl.cli.main import build_parser, main

# beside the clone (../shared), or beside a worktree directory (../../shared)
SARIF_SCHEMA = next(
    (
        base / "shared" / "vendor" / "sarif-schema-2.1.0.json"
        for base in (ROOT.parent, ROOT.parent.parent)
        if (base / "shared" / "vendor" / "sarif-schema-2.1.0.json").exists()
    ),
    ROOT.parent / "shared" / "vendor" / "sarif-schema-2.1.0.json",
)


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


def _sarif(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    main(argv)
    log: dict[str, Any] = json.loads(capsys.readouterr().out)
    if SARIF_SCHEMA.exists():
        import jsonschema

        jsonschema.validate(log, json.loads(SARIF_SCHEMA.read_text(encoding="utf-8")))
    return log


def _locations(log: dict[str, Any]) -> list[dict[str, str]]:
    return [
        loc["physicalLocation"]["artifactLocation"]
        for result in log["runs"][0]["results"]
        for loc in result.get("locations", [])
    ]


def test_sarif_uri_of_an_absolute_input_is_relative_to_the_working_directory(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    log = _sarif(["validate", "--format", "sarif", str(ROOT / "tests/broken/PC201.yaml")], capsys)
    assert _locations(log) == [{"uri": "tests/broken/PC201.yaml", "uriBaseId": "%SRCROOT%"}]
    bases = log["runs"][0]["originalUriBaseIds"]
    assert set(bases) == {"%SRCROOT%"} and "uri" not in bases["%SRCROOT%"]  # portable log


def test_sarif_root_makes_uris_relative_to_it_from_anywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "my repo"
    (repo / "policies").mkdir(parents=True)
    policy = repo / "policies" / "team policy.yaml"
    policy.write_text("tools:\n  denny: [exec]\n", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    argv = ["validate", "--format", "sarif", "--sarif-root", str(repo), str(policy)]
    log = _sarif(argv, capsys)
    assert _locations(log) == [{"uri": "policies/team%20policy.yaml", "uriBaseId": "%SRCROOT%"}]
    assert log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.as_uri() + "/"
    # a file outside the root keeps an absolute file: URI rather than a bare path
    log = _sarif(["validate", "--format", "sarif", str(policy)], capsys)
    assert _locations(log) == [{"uri": policy.as_uri()}]


def test_policy_test_sarif_takes_the_same_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    failing = ROOT / "tests" / "data" / "failing.test.yaml"
    log = _sarif(["test", "--format", "sarif", "--sarif-root", str(ROOT), str(failing)], capsys)
    uris = {loc["uri"] for loc in _locations(log)}
    assert uris and all(not u.startswith(("/", "file:")) for u in uris), uris
