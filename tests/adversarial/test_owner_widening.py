"""Owner runs are checked like every other run (issue: owner widenings passed every check).

Owner-only tools (gateway, nodes, automations) are filtered out of non-owner runs before the
pipeline, so a policy's own deny of them only matters when the owner runs. A matrix that never
sets the owner could not see such a deny disappear: the invariant passed, `matrix` said the
tools were removed everywhere and `diff --fail-on-widen` let the change through.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from policyctl.analysis.testing import run_test_file
from policyctl.cli.main import main

OLD = """\
catalog: openclaw
tools:
  deny: [gateway, nodes, automations]
agents:
  entries:
    ops: {}
"""
NEW = """\
catalog: openclaw
tools:
  deny: [automations]
agents:
  entries:
    ops: {}
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_an_invariant_fails_when_the_owner_gets_a_forbidden_tool(tmp_path: Path) -> None:
    _write(tmp_path, "policy.yaml", NEW)
    test = _write(
        tmp_path,
        "policy.test.yaml",
        "policy: policy.yaml\ninvariants:\n  - never: {tools: [gateway, nodes, automations]}\n",
    )
    result = run_test_file(test)
    [never] = result.results
    assert not never.passed
    assert any(" owner" in f and "gateway is allowed" in f for f in never.failures)
    assert not any("automations is allowed" in f for f in never.failures)
    # the owner is exempt only when the file says so
    exempt = _write(
        tmp_path,
        "exempt.test.yaml",
        "policy: policy.yaml\ninvariants:\n"
        "  - never: {tools: [gateway, nodes], unless: {owner: true}}\n",
    )
    assert run_test_file(exempt).failed == 0


def test_diff_fails_on_widen_when_only_the_owner_gains(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _write(tmp_path, "old.yaml", OLD)
    new = _write(tmp_path, "new.yaml", NEW)
    assert main(["diff", str(old), str(new), "--fail-on-widen", "--format", "json"]) == 1
    out = json.loads(capsys.readouterr().out)
    gains = [c for c in out["changes"] if c["direction"] == "gain"]
    assert gains and {t for c in gains for t in c["tools"]} == {"gateway", "nodes"}
    assert all("owner" in label.split() for c in gains for label in c["contexts"])


def test_matrix_does_not_call_an_owner_tool_removed_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = _write(tmp_path, "policy.yaml", NEW)
    assert main(["matrix", str(policy)]) == 0
    text = capsys.readouterr().out
    removed = next(line for line in text.splitlines() if line.startswith("removed everywhere"))
    assert "gateway" not in removed and "nodes" not in removed
    args = ["matrix", str(policy), "--format", "json", "--tool", "gateway", "--tool", "cron"]
    assert main(args) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    owner_rows = [r for r in rows if "owner" in r["context"].split()]
    others = [r for r in rows if r not in owner_rows]
    # the owner's automations (alias cron) are removed by the deny, everyone else's before
    assert owner_rows and all(r["cells"]["automations"] == "L3" for r in owner_rows)
    # for the owner, gateway is kept or removed by a layer, never by the owner-only filter
    assert all(r["cells"]["gateway"] != "C" for r in owner_rows)
    assert any(r["cells"]["gateway"] == "ok" for r in owner_rows)
    assert others and all(r["cells"] == {"gateway": "C", "automations": "C"} for r in others)
