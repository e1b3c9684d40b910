"""Generated lines (oracle_lines), run in real bash: a counterexample no known cause explains
fails the test; the explained ones are counted and printed with the seed.

CI runs a fixed seed and a bounded sample; `POLICYCTL_ORACLE_EXAMPLES=5000` runs a larger one
and `POLICYCTL_ORACLE_SEED=N` another sequence (the failure message repeats both).
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, seed, settings
from oracle_harness import run_line
from oracle_known import cause_of
from oracle_lines import lines
from oracle_property import example_count, findings

SEED = int(os.environ.get("POLICYCTL_ORACLE_SEED", "20261205"))
CI_EXAMPLES = 300
EXAMPLES = example_count(CI_EXAMPLES)
KNOWN: Counter[str] = Counter()


@seed(SEED)
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=False,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(lines())
def test_generated_lines_have_no_unknown_counterexample(line: str) -> None:
    rec = run_line(line)
    found = findings(rec)
    for f in found:
        cause = cause_of(f.line)
        if cause is not None:
            KNOWN[cause] += 1
    new = [f for f in found if cause_of(f.line) is None]
    assert not new, (
        f"POLICYCTL_ORACLE_SEED={SEED} POLICYCTL_ORACLE_EXAMPLES={EXAMPLES}: "
        + "\n".join(str(f) for f in new)
        + "\n"
        + rec.summary()
    )


def test_known_causes_seen_in_the_sample() -> None:
    """Runs after the property test in file order: prints what the known causes explained."""
    print(f"oracle seed {SEED}, {EXAMPLES} examples, known causes seen: {dict(KNOWN)}")


def test_the_docs_say_what_ci_runs() -> None:
    page = (Path(__file__).parents[2] / "docs" / "testing-and-ci.md").read_text(encoding="utf-8")
    assert f"CI runs {CI_EXAMPLES} generated lines with a fixed\nseed" in page
    assert "POLICYCTL_ORACLE_EXAMPLES=5000 POLICYCTL_ORACLE_SEED=" in page
