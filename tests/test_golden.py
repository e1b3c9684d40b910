"""Golden tests: stdout, stderr and exit code of every subcommand, on the shipped examples and
on the broken-policy set. A change in wording shows up here, in review.

Regenerate after an intended change (then read the diff before committing):

    POLICYCTL_UPDATE_GOLDEN=1 pytest tests/test_golden.py
"""

from __future__ import annotations

import os
import re
import shlex

import pytest
from conftest import ROOT

from policyctl.cli.main import main

GOLDEN = ROOT / "tests" / "golden"
BROKEN = sorted(
    p.name
    for p in (ROOT / "tests" / "broken").iterdir()
    if re.fullmatch(r"PC\d{3}\.(yaml|toml)", p.name)
)

CASES: dict[str, str] = {
    # validate
    "validate-examples": "validate examples/team.yaml examples/chatbot.yaml examples/platform.toml",
    "validate-json": "validate --format json tests/broken/PC201.yaml tests/broken/PC404.yaml tests/broken/PC410.yaml",
    "validate-sarif": "validate --format sarif tests/broken/PC201.yaml tests/broken/PC404.yaml tests/broken/PC410.yaml",
    "validate-github": "validate --format github tests/broken/PC201.yaml tests/broken/PC404.yaml tests/broken/PC410.yaml",
    "validate-strict": "validate --strict tests/broken/PC410.yaml",
    "validate-fail-on-warning": "validate --fail-on warning tests/broken/PC404.yaml",
    "validate-max-errors": "validate --max-errors 2 tests/broken/PC308.yaml tests/broken/PC410.yaml tests/broken/PC201.yaml",
    "validate-missing-file": "validate tests/broken/no-such-file.yaml",
    "validate-sampled": "validate --max-contexts 1 tests/broken/PC415.yaml",
    **{f"validate-{name.split('.')[0]}": f"validate tests/broken/{name}" for name in BROKEN},
    # resolve
    "resolve-team-coder": "resolve examples/team.yaml --agent coder --provider openai --model gpt-5.4",
    "resolve-chatbot-json": "resolve examples/chatbot.yaml --agent support --session-key agent:support:slack:group:C0ENGINEERING --sender-username ada --format json",
    "resolve-platform-leaf": "resolve examples/platform.toml --agent orchestrator --session-key agent:orchestrator:subagent:a:subagent:b",
    "resolve-warnings": "resolve tests/data/tiny.yaml --channel slack --group C1",
    "resolve-caller-group-ignored": "resolve tests/data/tiny.yaml --session-key agent:main:slack:group:C1 --group C2",
    "resolve-unknown-context": "resolve examples/chatbot.yaml --agent suport --channel slack --account acme-enterprse --group C0SECURE",
    "explain-unknown-context": "explain examples/team.yaml --agent codr --provider olama --tool exec",
    "resolve-cron-account-gone": "resolve tests/data/tiny.yaml --channel slack --account gone --group C1 --trigger cron",
    "resolve-bundle": "resolve tests/data/tiny.bundle.json --channel slack --group C1",
    "resolve-invalid": "resolve tests/broken/PC302.yaml",
    # explain
    "explain-team-screen-trail": "explain examples/team.yaml --agent coder --tool screen --trail",
    "explain-team-exec-allowed": "explain examples/team.yaml --agent coder --provider openai --tool exec",
    "explain-team-docs-summary": "explain examples/team.yaml --agent docs",
    "explain-reviewer-json": "explain examples/team.yaml --agent reviewer --provider openai --tool web_fetch --format json",
    "explain-chatbot-sandbox": "explain examples/chatbot.yaml --agent support --session-key agent:support:slack:group:C0ENGINEERING --tool conversations_list",
    "explain-platform-optional-plugin": "explain examples/platform.toml --agent orchestrator --tool voice_call",
    "explain-every-blocker": "explain tests/data/blockers.yaml --session-key agent:support:slack:group:C0SUPPORT --tool bash",
    "validate-test-file-and-bundle": "validate examples/team.test.yaml tests/data/tiny.bundle.json",
    "explain-call-ask": 'explain tests/data/calls.yaml --agent coder --tool exec --call \'{"command": "git push origin main"}\'',
    "explain-call-compound-deny": 'explain tests/data/calls.yaml --agent coder --tool bash --call \'{"command": "git status && rm -rf build"}\' --workspace /srv/ws',
    "explain-call-json": 'explain tests/data/calls.yaml --agent coder --tool read --call \'{"path": "config/.env"}\' --workspace /srv/ws --format json',
    "explain-call-removed-tool": 'explain tests/data/calls.yaml --agent coder --tool browser --call \'{"url": "https://x.test"}\'',
    "explain-call-not-an-object": "explain tests/data/calls.yaml --tool exec --call '[\"git\"]'",
    "explain-call-not-json": "explain tests/data/calls.yaml --tool exec --call 'git status'",
    "resolve-calls-json": "resolve tests/data/calls.yaml --agent coder --format json",
    "resolve-calls-text": "resolve tests/data/calls.yaml --agent coder",
    "explain-code": "explain PC303",
    "explain-unknown-code": "explain PC999",
    # test, matrix, diff
    "test-examples": "test examples/team.test.yaml examples/chatbot.test.yaml examples/platform.test.toml",
    "test-coverage": "test --coverage examples/platform.test.toml",
    "test-failing": "test tests/data/failing.test.yaml",
    "test-junit": "test --format junit tests/data/failing.test.yaml",
    "test-sarif": "test --format sarif tests/data/failing.test.yaml",
    "matrix-chatbot-csv": "matrix examples/chatbot.yaml --format csv --max-contexts 12",
    "matrix-platform": "matrix examples/platform.toml --max-contexts 8",
    "diff-text": "diff examples/team.yaml tests/data/team-changed.yaml",
    "diff-markdown": "diff examples/team.yaml tests/data/team-changed.yaml --format markdown",
    "diff-json-fail-on-widen": "diff examples/team.yaml tests/data/team-changed.yaml --format json --fail-on-widen",
    "diff-calls": "diff examples/team.yaml tests/data/team-changed.yaml --calls tests/data/calls.jsonl --workspace /srv/repo --home /home/dev --max-contexts 40 --fail-on-widen",
    "matrix-team-call-rules": "matrix examples/team.yaml --agent coder --tool exec --tool read --tool ls --changed-only --max-contexts 30",
    "matrix-team-summary": "matrix examples/team.yaml --summary",
    # simulate
    "simulate-reviewer": "simulate examples/team.yaml --calls tests/data/session.jsonl --agent reviewer --provider openai",
    "simulate-call-rules": "simulate examples/team.yaml --calls tests/data/calls.jsonl --agent coder --provider openai --workspace /srv/repo --home /home/dev",
    "simulate-json": "simulate examples/chatbot.yaml --calls tests/data/session.jsonl --agent support --session-key agent:support:slack:group:C0ENGINEERING --format json",
    "simulate-bad-calls": "simulate examples/team.yaml --calls tests/data/openclaw.json5",
    # compile, fmt, import, schema
    "compile-check-fresh": "compile --check tests/data/tiny.bundle.json tests/data/tiny.yaml",
    "compile-check-stale": "compile --check tests/data/tiny.bundle.json examples/team.yaml",
    "fmt-check-examples": "fmt --check examples/team.yaml examples/chatbot.yaml",
    "fmt-check-unformatted": "fmt --check tests/data/unformatted.yaml",
    "fmt-toml": "fmt --check examples/platform.toml",
    "import-openclaw": "import tests/data/openclaw.json5",
    "import-openclaw-slack-mcp": "import tests/data/openclaw-slack-mcp.json5",
    "import-claude": "import tests/data/claude-settings.json",
    "import-gemini": "import tests/data/gemini-rules.toml",
    "fmt-check-mixed": "fmt --check examples/platform.toml examples/team.yaml",
    "schema-check": "schema --output-dir schemas --check",
}


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = main(argv)
    out, err = capsys.readouterr()
    return f"$ policyctl {shlex.join(argv)}\n--- exit: {code}\n--- stdout\n{out}--- stderr\n{err}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(
    name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("NO_COLOR", "1")
    got = _run(shlex.split(CASES[name]), capsys)
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("POLICYCTL_UPDATE_GOLDEN"):
        path.write_text(got, encoding="utf-8")
    assert path.exists(), (
        f"no golden file for {name}: run POLICYCTL_UPDATE_GOLDEN=1 pytest {__file__}"
    )
    assert got == path.read_text(encoding="utf-8")


def test_no_stale_golden_files() -> None:
    assert {p.stem for p in GOLDEN.glob("*.txt")} == set(CASES)
