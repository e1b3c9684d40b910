"""Red-team findings 1, 3 and 4: a line that changes what a command name runs, and deny rules
on lines the parser does not accept."""

from __future__ import annotations

import pytest

from policyctl import RunContext, load_policy_text, resolve

DENY_RM = 'tools:\n  callDefault: ask\n  deny: ["exec(rm *)", "exec(*/rm *)"]\n  allow: [exec]\n'
ALLOW_GIT = 'tools:\n  allow: ["exec(git *)"]\n'


def verdict(policy: str, command: str) -> str:
    r = resolve(load_policy_text(policy), RunContext(provider="openai", workspace="/tmp"))
    return str(r.decide_call("exec", {"command": command}).verdict.effect.label)


@pytest.mark.parametrize(
    "line",
    [
        "hash -p /bin/rm git; git -rf /",
        "hash -p /usr/bin/sudo ls; ls rm x",
        "hash -lp /bin/rm git; git x",
        "builtin hash -p /bin/rm git; git x",
        "command hash -p /bin/rm git; git x",
        "enable -f /tmp/x.so git; git x",
        "enable -n kill; kill 1",
    ],
)
def test_rebinding_a_command_name_is_not_analysable(line: str) -> None:
    assert verdict(DENY_RM, line) == "ask"
    assert verdict(ALLOW_GIT, line) == "deny"


@pytest.mark.parametrize("line", ["hash", "hash -r", "hash git", "hash -t git", "enable"])
def test_hash_and_enable_that_bind_nothing_are_plain_commands(line: str) -> None:
    assert verdict(DENY_RM, line) == "allow"


@pytest.mark.parametrize(
    "line",
    [
        "PATH=/tmp/evil git status",
        "LD_PRELOAD=/tmp/x.so git status",
        "env LD_PRELOAD=/tmp/x.so git status",
        "env -i PATH=/tmp/evil git status",
        "/usr/bin/env GIT_SSH_COMMAND='rm -rf /' git fetch",
        "GIT_SSH_COMMAND='rm -rf /' git fetch",
        "GIT_EXEC_PATH=/tmp git status",
        "BASH_ENV=/tmp/x git status",
        "ENV=/tmp/x git status",
        "IFS=/ git status",
        "PAGER='rm x' git log",
        "HOME=/tmp/evil git status",
        "PYTHONPATH=/tmp git status",
        "DYLD_INSERT_LIBRARIES=/tmp/x git status",
        "A=1 PATH=/tmp/evil git status",
        "PATH=/tmp/evil; git status",
        "export PATH=/tmp/evil; git status",
        "PATH+=:/tmp/evil git status",
        "sudo LD_PRELOAD=/x git status",
        "timeout 5 env PATH=/x git status",
    ],
)
def test_assignments_that_change_what_runs_are_not_analysable(line: str) -> None:
    assert verdict(ALLOW_GIT, line) == "deny"
    assert verdict(ALLOW_GIT.replace("allow:", "callDefault: ask\n  allow:"), line) == "ask"


@pytest.mark.parametrize(
    "line", ["PATH=/tmp/evil rm x", "env LD_PRELOAD=/x rm x", "GIT_DIR=/x /bin/rm x"]
)
def test_deny_rules_still_judge_the_command_after_such_an_assignment(line: str) -> None:
    assert verdict(DENY_RM, line) == "deny"


@pytest.mark.parametrize(
    "line", ["FOO=1 git status", "LANG=C git status", "env TZ=UTC git log", "_=1 git status"]
)
def test_other_assignments_are_stripped(line: str) -> None:
    assert verdict(ALLOW_GIT, line) == "allow"


@pytest.mark.parametrize(
    "line",
    [
        "cat <<EOF; rm x\nhi\nEOF",
        "cat <<-EOF; rm -rf /\n\thi\n\tEOF",
        "echo `#`; rm x",
        "echo `#` && /bin/rm x",
        "cat <<'EOF' ; echo ok; rm x\nbody\nEOF",
    ],
)
def test_deny_meets_commands_of_a_line_the_parser_rejects(line: str) -> None:
    assert verdict(DENY_RM, line) == "deny"


@pytest.mark.parametrize("line", ["cat <<EOF; ls\nhi\nEOF", "echo `#`; ls"])
def test_a_rejected_line_without_a_denied_command_stays_unanalysable(line: str) -> None:
    assert verdict(DENY_RM, line) == "ask"
    assert verdict(ALLOW_GIT.replace("git", "ls"), line) == "deny"
