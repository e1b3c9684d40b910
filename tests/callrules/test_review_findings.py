"""Bypasses an adversarial review found, each proven against real bash and git, then decided.

Each row: a line real bash runs so that a denied command runs (or a denied file changes),
and the decision policyctl must give it under the README's idiom.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from policyctl import load_policy_text, resolve
from policyctl.context import RunContext

POLICY = """
catalog: openclaw
tools:
  profile: coding
  allow: ["exec(git *)", "exec(sed *)"]
  ask: ["exec(git push *)"]
  deny: ["exec(rm *)", "read(.env)", "write(.env)"]
"""

HEREDOC = "git status <<$'EOF'\nx\nEOF\nrm victim\n$'EOF'"
HEREDOC_DQ = 'git status <<$"EOF"\nx\nEOF\nrm victim\n$"EOF"'

#: (line, what real bash does that the policy refuses: a file that is gone or changed)
CASES = [
    (HEREDOC, "victim"),
    (HEREDOC_DQ, "victim"),
    ("git ls-remote --upload-pa='rm victim; git-upload-pack' .", "victim"),
    ("git ls-remote --exec='rm victim; git-upload-pack' .", "victim"),
    ("git fetch --upload-pac='rm victim; git-upload-pack' .", "victim"),
    ("sed --in-pl s/1/2/ .env", ".env"),
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, env=env)
    (tmp_path / "victim").write_text("x")
    (tmp_path / ".env").write_text("S=1")
    return tmp_path


@pytest.mark.parametrize(("line", "touched"), CASES)
def test_real_bash_runs_what_the_policy_refuses(repo: Path, line: str, touched: str) -> None:
    before = (repo / touched).read_text()
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["/bin/bash", "-c", line], cwd=repo, env=env, capture_output=True, timeout=30)
    path = repo / touched
    assert not path.exists() or path.read_text() != before, "bash did not do it: not a bypass"


@pytest.mark.parametrize(("line", "touched"), CASES)
def test_policyctl_refuses_it(line: str, touched: str) -> None:
    run = resolve(load_policy_text(POLICY, "review.yaml"), RunContext(workspace="/ws"))
    decision = run.decide_call("exec", {"command": line})
    assert decision.effect.label == "deny", decision.verdict
