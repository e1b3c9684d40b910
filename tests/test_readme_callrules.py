"""The "Call rules" page (docs/call-rules.md): every decision, table and claim it shows is what
policyctl does (the policy, the calls and the evasion table are read from the page itself)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES, ROOT
from ruamel.yaml import YAML

from policyctl import RunContext, load_policy, resolve
from policyctl.analysis.testing import PolicyTestFile
from policyctl.catalog.load import builtin_catalog
from policyctl.cli.main import main
from policyctl.diagnostics import CODES

PAGE = (ROOT / "docs" / "call-rules.md").read_text(encoding="utf-8")
SECTION = PAGE.split("# Call rules:", 1)[1]  # the whole page: its title starts it


def block_after(marker: str) -> str:
    rest = SECTION.split(f"<!-- {marker} -->", 1)[1]
    return rest.split("```yaml\n", 1)[1].split("```", 1)[0]


def table_after(marker: str) -> list[list[str]]:
    rest = SECTION.split(f"<!-- {marker} -->", 1)[1].lstrip("\n")
    rows = []
    for line in rest.splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    assert rows, marker
    return rows


def code(cell: str) -> str:
    found = re.fullmatch(r"`(.*)`", cell)
    assert found, cell
    return found.group(1)


def policy_from(tmp_path: Path, text: str) -> Any:
    path = tmp_path / "p.yaml"
    path.write_text(text, encoding="utf-8")
    return load_policy(path)


def run_of(policy: Any) -> Any:
    return resolve(policy, RunContext(workspace="/srv/repo", home="/home/dev"), require_tools=False)


def test_the_example_policy_decides_as_the_table_says(tmp_path: Path) -> None:
    res = run_of(policy_from(tmp_path, block_after("call-rules:policy")))
    rows = table_after("call-rules:decisions")
    assert len(rows) >= 12
    for tool, args, decision, _ in rows:
        got = res.decide_call(tool, json.loads(code(args))).verdict
        assert got.effect.label == decision, (tool, args, got)


def test_the_argument_kind_tables_are_the_catalogs() -> None:
    names = {"shell command": "shell", "path": "path", "the paths a patch touches": "patch"}
    names["URL"] = "url"
    for catalog_name in ("openclaw", "nanobot", "claude-code", "gemini-cli", "codex"):
        catalog = builtin_catalog(catalog_name)
        want = {
            t.id: (t.argument_kind, t.argument_key, t.cwd_key)
            for t in catalog.tools
            if t.argument_kind is not None
        }
        got = {}
        for tools, kind, argument in table_after(f"call-rules:kinds {catalog_name}"):
            key = re.match(r"`([^`]+)`", argument)
            cwd = re.search(r"working directory `([^`]+)`", argument)
            assert key
            for tool in re.findall(r"`([^`]+)`", tools):
                got[tool.lower()] = (names[kind], key.group(1), cwd.group(1) if cwd else None)
        assert got == want, catalog_name


def _rules(cell: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for effect, entry in re.findall(r"(deny|allow|ask) `([^`]+)`", cell):
        out.setdefault(effect, []).append(entry)
    return out


def test_the_evasion_limits_are_real(tmp_path: Path) -> None:
    rows = table_after("call-rules:evasion")
    assert len(rows) >= 6
    for rules, command, decision, _ in rows:
        doc = {"catalog": "openclaw", "tools": {"profile": "coding", **_rules(rules)}}
        res = run_of(policy_from(tmp_path, json.dumps(doc)))
        got = res.decide_call("exec", {"command": code(command)}).verdict
        assert got.effect.label == decision, (rules, command, got)


@pytest.mark.parametrize(
    ("rules", "command", "decision"),
    [
        # "git allowed, push asks"
        ({"allow": ["exec(git *)"], "ask": ["exec(git push *)"]}, "git push", "ask"),
        ({"allow": ["exec(git *)"], "ask": ["exec(git push *)"]}, "git log", "allow"),
        ({"allow": ["exec(git *)"], "ask": ["exec(git push *)"]}, "ls", "deny"),
        # "git allowed, everything else asks"
        ({"allow": ["exec(git *)"], "callDefault": "ask"}, "ls", "ask"),
        ({"allow": ["exec(git *)"], "callDefault": "ask"}, "git diff", "allow"),
        # "rm refused, everything else asks"
        ({"deny": ["exec(rm *)"], "ask": ["exec"]}, "rm x", "deny"),
        ({"deny": ["exec(rm *)"], "ask": ["exec"]}, "ls", "ask"),
    ],
)
def test_the_idioms(tmp_path: Path, rules: dict[str, Any], command: str, decision: str) -> None:
    assert "Idioms:" in SECTION
    doc = {"catalog": "openclaw", "tools": {"profile": "coding", **rules}}
    res = run_of(policy_from(tmp_path, json.dumps(doc)))
    assert res.decide_call("exec", {"command": command}).verdict.effect.label == decision


def test_names_first_and_most_restrictive_across_layers(tmp_path: Path) -> None:
    doc = {
        "catalog": "openclaw",
        "tools": {"profile": "coding", "deny": ["exec(rm *)"], "ask": ["exec(git push *)"]},
        "agents": {"entries": {"coder": {"tools": {"allow": ["exec(*)", "read"]}}}},
    }
    policy = policy_from(tmp_path, json.dumps(doc))
    res = resolve(policy, RunContext(agent="coder"), require_tools=False)
    assert res.is_allowed("exec")  # a deny specifier keeps the name; an allow one admits it
    assert res.decide_call("exec", {"command": "rm x"}).verdict.effect.label == "deny"
    assert res.decide_call("exec", {"command": "git push"}).verdict.effect.label == "ask"


def test_the_test_file_snippet_and_the_failure_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snippet = SECTION.split("`policyctl test`", 1)[1].split("```yaml\n", 1)[1].split("```")[0]
    cases = YAML(typ="safe").load(snippet.replace("\n  ", "\n"))["cases"]
    PolicyTestFile.model_validate({"policy": "x.yaml", "cases": cases})
    shutil.copy(EXAMPLES / "team.yaml", tmp_path / "team.yaml")  # `policy:` is confined
    test = tmp_path / "t.test.yaml"
    test.write_text(
        "policy: team.yaml\ncases:\n  - name: rm\n    context: {agent: coder}\n"
        "    calls: [{tool: exec, args: {command: rm -rf build}, expect: allow}]\n",
        encoding="utf-8",
    )
    assert main(["test", str(test)]) == 1
    out = capsys.readouterr().out
    quoted = re.search(r"A failing call says what decided it instead: `(.*?)`, with", SECTION, re.S)
    assert quoted
    text = " ".join(quoted.group(1).split()).replace("team.yaml", str(tmp_path / "team.yaml"))
    assert text in out


def test_every_code_the_section_names_is_registered() -> None:
    named = set(re.findall(r"PC\d{3}", SECTION))
    ranges = re.findall(r"PC(\d{3})-PC(\d{3})", SECTION)
    for low, high in ranges:
        named |= {f"PC{n}" for n in range(int(low), int(high) + 1)}
    assert named >= {"PC356", "PC365", "PC470", "PC471", "PC472"}
    assert named <= set(CODES)


def test_a_relative_path_without_a_workspace_is_not_analysed(tmp_path: Path) -> None:
    assert "without them, a relative path" in SECTION
    res = resolve(policy_from(tmp_path, block_after("call-rules:policy")), RunContext())
    verdict = res.decide_call("read", {"path": "src/app.py"}).verdict
    assert verdict.effect.label == "deny" and verdict.reason.value == "cannot be analysed"
    assert verdict.entry == "callDefault"
