"""The broken-policy set: one file per diagnostic code, each caught with its code and location,
plus `CODE-what.yaml` variants: one mistake each, of the kinds that used to drag false
follow-ons behind them.

Each file under tests/broken/ starts with `# expect: CODE [LINE:COL] [(in FILE)] [xN]`, and
validate must report exactly that: N diagnostics of CODE (default 1) and nothing else, unless a
second line `# also: CODE ...` names the other findings the file holds on purpose. One
malformed entry gives one diagnostic.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ROOT

from policyctl.cli.validate import validate_file
from policyctl.diagnostics import CODES

BROKEN = ROOT / "tests" / "broken"
EXPECT = re.compile(r"# expect: (PC\d{3})(?: (\d+):(\d+))?(?: \(in ([^)]+)\))?(?: x(\d+))?")
ALSO = re.compile(r"# also: ((?:PC\d{3} ?)+)")


def _has_header(path: Path) -> bool:
    return path.read_bytes().startswith(b"# expect:")


CASES = sorted(
    p
    for p in BROKEN.iterdir()
    if re.fullmatch(r"PC\d{3}(-[a-z0-9-]+)?\.(yaml|toml|json)", p.name) and _has_header(p)
)


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_broken_policy_is_caught(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    header, second = [*path.read_bytes().decode("utf-8", "replace").split("\n", 2), ""][:2]
    found = EXPECT.match(header)
    assert found, f"{path.name} has no '# expect:' header"
    code, line, column, other, count = found.groups()
    assert path.stem.split("-")[0] == code
    diags = validate_file(
        str(path.relative_to(ROOT)), strict=False, max_contexts=1 if code == "PC415" else 2000
    )
    matching = [d for d in diags if d.code == code]
    assert matching, f"{code} not reported; got {[str(d) for d in diags]}"
    if line is not None:
        d = matching[0]
        assert d.source is not None
        assert (d.source.line, d.source.column) == (int(line), int(column)), str(d)
        assert Path(d.source.file).name == (other or path.name)
    # exactly what the file is about: no false follow-ons of the one mistake
    also = set(ALSO.match(second).group(1).split()) if ALSO.match(second) else set()
    assert len(matching) == int(count or 1), [str(d) for d in diags]
    assert {d.code for d in diags} - {code} <= also, [str(d) for d in diags]


def test_unreadable_and_oversized_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from policyctl.settings import default_limits

    assert [d.code for d in validate_file(str(tmp_path / "missing.yaml"), False, 10)] == ["PC101"]
    big = tmp_path / "big.yaml"
    big.write_text("tools: {deny: [exec]}\n" * 10, encoding="utf-8")
    monkeypatch.setenv("POLICYCTL_MAX_FILE_BYTES", "100")
    default_limits.cache_clear()
    try:
        assert [d.code for d in validate_file(str(big), False, 10)] == ["PC106"]
    finally:
        default_limits.cache_clear()


def test_every_validate_code_has_a_broken_policy() -> None:
    # PC112 needs a FIFO or a device: tests/adversarial/test_files.py makes one; PC117 a
    # policy beyond a size limit: tests/adversarial/test_limits.py lowers the limits
    covered = {p.stem.split("-")[0] for p in CASES} | {"PC101", "PC106", "PC112", "PC117"}
    # codes produced only while resolving a run (or by a bundle) are covered by golden tests
    runtime_only = {"PC401", "PC402", "PC406", "PC407", "PC409", "PC416", "PC116", "PC460"}
    # files that are not policies (a bundle is JSON: no "# expect:" header; a test file must be
    # named *.test.yaml): covered by tests/test_validation.py and the golden tests
    runtime_only |= {"PC433", "PC434"}
    runtime_only |= {"PC450", "PC451", "PC452", "PC453", "PC454"}  # unknown context values
    runtime_only |= {"PC440"}  # disagreeing context fields: tests/test_context_disagreements.py
    runtime_only |= {"PC480"}  # the runtime: a run whose rules ask, with no approver
    # bundle keys and signatures: a bundle is JSON with no header; tests/test_bundle_trust.py
    runtime_only |= {"PC160", "PC161", "PC162", "PC163"}
    runtime_only |= {"PC313"}  # a forged MCP marker: tests/adversarial/test_mcp_mark.py
    runtime_only |= {"PC317"}  # diff's REV:path argument: tests/adversarial/test_revision.py
    runtime_only |= {
        "PC120",
        "PC383",
        "PC384",
        "PC386",
        "PC437",  # fmt only
    }  # a failed reload; a runtime inventory; caller fields
    # call-rule codes of validate's own checks (callrules' validate range) are covered where
    # those checks are tested
    callrules_checks = {f"PC{n}" for n in range(365, 370)}
    callrules_checks |= {"PC417"}  # tests/test_callchecks.py lowers the comparison budget
    # `policyctl import` findings on Claude Code and Gemini CLI files: tests/test_import_calls*
    importer = {f"PC{n}" for n in range(125, 130)} | {"PC150"}
    importer |= {f"PC{n}" for n in range(323, 327)}  # OpenClaw: tests/test_import_restrictions
    # `policyctl hook` and its install and doctor: tests/hooks/
    hooks = {f"PC{n}" for n in range(180, 187)} | {f"PC{n}" for n in range(370, 375)}
    importer |= {"PC461", "PC462"}  # OpenClaw's Slack channel maps: tests/test_import_slack.py
    # `policyctl gateway`: tests/gateway/ (PC503, an upstream's refused listing, is only logged)
    hooks |= {f"PC{n}" for n in range(500, 505)}
    # `policyctl serve`: its requests, sources and settings (tests/server/)
    hooks |= {f"PC{n}" for n in range(520, 531)}
    assert set(CODES) - runtime_only - callrules_checks - importer - hooks == covered
