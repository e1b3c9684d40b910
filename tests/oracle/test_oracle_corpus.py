"""Every hand-picked line of corpus.txt, run in real bash: no counterexample but known ones."""

from __future__ import annotations

from pathlib import Path

import pytest
from oracle_harness import run_line
from oracle_known import cause_of
from oracle_property import findings

CORPUS = Path(__file__).with_name("corpus.txt")
LINES = [
    raw.replace("\\n", "\n")
    for raw in CORPUS.read_text(encoding="utf-8").splitlines()
    if raw.strip() and not raw.startswith("#")
]


@pytest.mark.parametrize("line", LINES)
def test_no_unknown_counterexample(line: str) -> None:
    rec = run_line(line)
    assert rec.executed, f"bash ran nothing for {line!r}: {rec.status}"
    new = [f for f in findings(rec) if cause_of(f.line) is None]
    assert not new, "\n".join(str(f) for f in new) + "\n" + rec.summary()
