"""policyctl inside the real nanobot (PyPI `nanobot-ai`), run in an environment of its own.

nanobot-ai pins `mcp<2`, so it gets a virtual environment apart from this suite's: the one
named by POLICYCTL_NANOBOT_PYTHON (its python), or one this test builds under `.cache/` from
the package index (nanobot-ai at the version below, pytest, and policyctl from this checkout).
The tests in `nanobot_real/` then run there against this checkout's code, and each of them is
reported here as a test of its own. An environment that cannot be built fails the tests; it
does not skip them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NANOBOT = "nanobot-ai==0.3.5"
INNER = Path(__file__).parent / "nanobot_real"
ENV_DIR = ROOT / ".cache" / "nanobot-venv"
#: the inner tests this suite expects (a test renamed or lost there fails here)
EXPECTED = (
    "test_removed_tools_are_never_offered",
    "test_without_the_policy_nanobot_offers_them",
    "test_calls_are_decided_before_they_run",
    "test_ask_without_an_approver_is_refused_and_with_one_runs",
    "test_a_policyctl_failure_refuses_the_call",
    "test_uninstall_restores_nanobot",
    "test_subagents_get_the_child_run_of_their_parent",
    "test_a_subagent_never_gets_more_than_its_parent",
    "test_scheduled_runs_are_decided_as_cron_runs",
)


def _has_nanobot(python: Path) -> bool:
    probe = "import importlib.metadata as m; print(m.version('nanobot-ai'), m.version('pytest'))"
    done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True)
    return done.returncode == 0 and done.stdout.split()[0] == NANOBOT.split("==")[1]


def _build() -> Path:
    python = ENV_DIR / "bin" / "python"
    if python.exists() and _has_nanobot(python):
        return python
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(ENV_DIR)], check=True)
    install = [str(python), "-m", "pip", "install", "--quiet", NANOBOT, "pytest", str(ROOT)]
    done = subprocess.run(install, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"could not build the nanobot environment:\n{done.stdout}\n{done.stderr}")
    return python


@cache
def _outcomes() -> dict[str, str]:
    given = os.environ.get("POLICYCTL_NANOBOT_PYTHON")
    python = Path(given) if given else _build()
    if not _has_nanobot(python):
        pytest.fail(f"{python} has no {NANOBOT} (and pytest) installed")
    report = ENV_DIR.parent / "nanobot-junit.xml"
    report.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's code, not an installed copy
    done = subprocess.run(
        [
            str(python),
            "-m",
            "pytest",
            "-q",
            "-c",
            str(INNER / "pytest.ini"),
            f"--confcutdir={INNER}",
            f"--junitxml={report}",
            str(INNER),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=900,
    )
    outcomes: dict[str, str] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        failed = case.find("failure") if case.find("failure") is not None else case.find("error")
        skipped = case.find("skipped")
        if failed is not None:
            outcomes[case.get("name", "")] = f"failed: {failed.get('message')}\n{failed.text}"
        elif skipped is not None:
            outcomes[case.get("name", "")] = f"skipped: {skipped.get('message')}"
        else:
            outcomes[case.get("name", "")] = "passed"
    if not outcomes:
        pytest.fail(f"the nanobot tests did not run:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    return outcomes


@pytest.mark.parametrize("name", EXPECTED)
def test_in_real_nanobot(name: str) -> None:
    outcome = _outcomes().get(name, "did not run")
    assert outcome == "passed", outcome


def test_every_real_nanobot_test_is_reported_here() -> None:
    assert sorted(_outcomes()) == sorted(EXPECTED)
