"""SARIF output passes the OASIS SARIF 2.1.0 schema (from ../shared/vendor, beside the clone)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT

from policyctl.cli.main import main

SCHEMA = ROOT.parent / "shared" / "vendor" / "sarif-schema-2.1.0.json"


@pytest.mark.skipif(not SCHEMA.exists(), reason=f"SARIF schema not found at {SCHEMA}")
def test_sarif_output_is_valid_sarif_2_1_0(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import jsonschema

    monkeypatch.chdir(ROOT)
    broken = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests" / "broken").glob("PC*.yaml"))
    code = main(["validate", "--format", "sarif", "--max-errors", "0", *broken])
    out, _ = capsys.readouterr()
    log = json.loads(out)
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validate(log, schema)  # raises with the failing path on any violation
    assert code == 2  # the set includes a file that is not UTF-8: unreadable input
    results = log["runs"][0]["results"]
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert len(results) >= len(broken)
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    located = [r for r in results if "locations" in r]
    first = located[0]["locations"][0]["physicalLocation"]
    assert first["artifactLocation"]["uri"].startswith("tests/broken/")
    assert first["region"]["startLine"] >= 1


def test_sarif_for_a_clean_file_has_no_results(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["validate", "--format", "sarif", "examples/team.yaml"]) == 0
    log = json.loads(capsys.readouterr()[0])
    assert log["version"] == "2.1.0" and log["runs"][0]["results"] == []
    assert Path(ROOT / "examples" / "team.yaml").exists()
