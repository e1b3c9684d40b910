"""The table of counterexamples the bash oracle found (oracle_known.CASES).

Each row is checked twice: bash really does something a rule of its policy refuses at least
`at_least` strictly (so the row stays true to reality), and policyctl's decision is at least as
strict. Rows with a known cause fail the second check today (`xfail(strict=True)`): the fix
flips them, and then the row's cause comes out of oracle_known.CAUSES.
"""

from __future__ import annotations

import pytest
from oracle_harness import run_line
from oracle_known import CASES, CAUSES, Case
from oracle_property import decide, observed


def _id(case: Case) -> str:
    return f"{case.policy}:{case.line}"


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_bash_really_does_what_the_row_says(case: Case) -> None:
    rec = run_line(case.line)
    seen, evidence = observed(case.policy, rec)
    assert seen >= case.at_least, (case, rec.summary())
    assert evidence


def _marked(case: Case) -> object:
    if case.cause is None:
        return case
    mark = pytest.mark.xfail(strict=True, reason=f"{case.cause}: {CAUSES[case.cause][1]}")
    return pytest.param(case, marks=mark, id=_id(case))


@pytest.mark.parametrize("case", [_marked(c) for c in CASES], ids=_id)
def test_policyctl_is_at_least_as_strict(case: Case) -> None:
    decided, why = decide(case.policy, case.line, "/srv/ws", "/srv/home")
    assert decided >= case.at_least, f"{case.line!r} under {case.policy}: {why}"


def test_every_cause_has_a_row_and_every_row_a_known_cause() -> None:
    used = {c.cause for c in CASES if c.cause is not None}
    assert used == set(CAUSES)
