"""Commands hidden where policyctl saw no command: a backquote or `$(...)` that is the operand of
`${...}` (`echo ${x:-`rm -rf ~`}`: the grammar keeps it as a plain word), and a runner given a
whole script as one word (`script -c 'rm -rf ~'`, `flock L -c '...'`, `watch 'rm -rf ~'`,
`ssh host 'rm -rf ~'`). Each is unanalysable (callDefault where `exec` has specifiers), and the
hidden command is still found and screened, so `deny: ["exec(rm *)"]` refuses it.

The lines are run by bash too: the hidden command really runs.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from test_against_bash import commands_bash_runs
from test_shell_variables import ALLOW_ANY, ASK_ANY, DENY_RM, verdict

from policyctl.callrules.shell import analyse

BASH = shutil.which("bash") or "/bin/bash"

#: each runs c1 in the same bash (seen by test_against_bash's DEBUG trap); `y` is set, `x` not
OPERANDS = [
    "echo ${x:-`c1`}",
    'echo "${x:-`c1`}"',
    "echo ${x:=`c1`}",
    "y=1; echo ${y:+`c1`}",
    "git status ${x:-`c1`}",
    "echo ${x[0]:-`c1`}",
    "echo ${@:-`c1`}",
    "echo ${1:-`c1`}",
    "echo ${x-`c1`}",
    "echo ${x=`c1`}",
    "echo ${x:-${y:-`c1`}}",
    "echo ${x:-$[`c1; echo 1`]}",
    "y=ab; echo ${y#`c1`}",
    "y=ab; echo ${y#$(c1)}",
    "y=ab; echo ${y%%`c1`}",
    "y=ab; echo ${y/a/`c1`}",
    "echo \"${x:-'`c1`'}\"",
    "[[ x =~ `c1` ]]",
    "[[ x =~ ^`c1`$ ]]",
]

#: operands with nothing that runs: still analysable
PLAIN_OPERANDS = [
    "echo ${x:-default}",
    "echo ${x#*/} ${x%.py} ${x/a/b}",
    "echo ${x:-$HOME}",
    "echo ${x:-\\`c1\\`}",
    "echo ${x:-'$(c1)'}",
    "[[ x =~ '`c1`' ]]",
]


@pytest.mark.parametrize("line", OPERANDS)
def test_a_substitution_in_an_operand_is_not_analysable(line: str) -> None:
    found = analyse(line)
    assert found.problems, line
    assert "c1" in {c.words[0] for c in found.commands}
    assert verdict(ALLOW_ANY, line) == "deny"
    assert verdict(ASK_ANY, line) == "ask"
    # the grammar rejects a blank in a backquoted `=~` regex: that line is unanalysable with
    # its `rm` unseen (callDefault), so the deny rule is shown on a one-word command there
    assert verdict(DENY_RM, line.replace("c1", "rm" if "=~" in line else "rm -rf ~")) == "deny"


@pytest.mark.parametrize("line", PLAIN_OPERANDS)
def test_an_operand_without_a_substitution_stays_analysable(line: str) -> None:
    assert not analyse(line).problems, analyse(line).problems
    assert verdict(ALLOW_ANY, line) == "allow"


@pytest.mark.skipif(not Path(BASH).exists(), reason="needs bash")
@pytest.mark.parametrize("line", OPERANDS)
def test_bash_runs_the_operand(line: str, tmp_path: Path) -> None:
    assert "c1" in commands_bash_runs(line, tmp_path)


@pytest.mark.skipif(not Path(BASH).exists(), reason="needs bash")
@pytest.mark.parametrize("line", PLAIN_OPERANDS)
def test_bash_runs_no_plain_operand(line: str, tmp_path: Path) -> None:
    assert "c1" not in commands_bash_runs(line, tmp_path)


# -- runners given a script string -----------------------------------------------------------

#: each makes a child process run `mkdir ran`
RUNNER_SCRIPTS = [
    "script -qc 'mkdir ran' /dev/null",
    "script -q -c 'mkdir ran' /dev/null",
    "script -q --command='mkdir ran' /dev/null",
    "flock lk -c 'mkdir ran'",
    "flock lk --command 'mkdir ran'",
    "timeout 3 watch -n 0.5 -g 'mkdir ran'",
]

#: the same, where bash was not run (no peer host, group or server here)
RUNNER_SCRIPTS_UNRUN = [
    "ssh host 'mkdir ran'",
    "sg staff -c 'mkdir ran'",
    "tmux new-session -d 'mkdir ran'",
    "sudo -u bob flock lk -c 'mkdir ran'",
]


@pytest.mark.parametrize("line", RUNNER_SCRIPTS + RUNNER_SCRIPTS_UNRUN)
def test_a_runners_script_meets_deny_rules(line: str) -> None:
    denied = line.replace("mkdir ran", "rm -rf x")
    assert verdict(DENY_RM, denied) == "deny", denied
    mkdir = [c for c in analyse(line).commands if c.words[0] == "mkdir"]
    assert mkdir and all(c.screen for c in mkdir)


@pytest.mark.parametrize(
    "line",
    [
        'script -qc "$cmd" /dev/null',
        "flock lk -c $cmd",
        "watch $cmd",
        "sudo -s 'rm$IFS-rf x'",  # sudo -s escapes every character but `$` for the shell
    ],
)
def test_a_runner_whose_script_cannot_be_placed_is_not_analysable(line: str) -> None:
    assert analyse(line).problems
    assert verdict(ASK_ANY, line) == "ask"


@pytest.mark.parametrize(
    "line",
    ["watch -n 1 git status", "flock lk git pull", "ssh host uptime", "script -q log.txt"],
)
def test_a_runner_with_plain_words_stays_analysable(line: str) -> None:
    assert not analyse(line).problems
    assert verdict(ALLOW_ANY, line) == "allow"


@pytest.mark.skipif(not Path(BASH).exists(), reason="needs bash")
@pytest.mark.parametrize("line", RUNNER_SCRIPTS)
def test_a_runner_runs_its_script_string(line: str, tmp_path: Path) -> None:
    program = line.split()[2] if line.startswith("timeout") else line.split()[0]
    if not shutil.which(program):
        pytest.skip(f"needs {program}")
    subprocess.run(
        [BASH, "--norc", "--noprofile", "-c", line],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TERM": "dumb"},
        capture_output=True,
        timeout=10,
        stdin=subprocess.DEVNULL,
    )
    assert (tmp_path / "ran").exists()


# -- git configuration on the command line -----------------------------------------------------

#: each makes git (run in a fresh repository) run `mkdir ../ran`; X holds the command
GIT_RUNS = [
    "git -c core.fsmonitor='mkdir ../ran; false' status",
    "git -c Core.FSMonitor='mkdir ../ran; false' status",
    "git -c alias.st='!mkdir ../ran' st",
    "git --config-env=core.fsmonitor=X status",
    "git --config-env core.fsmonitor=X status",
    "git -C . -c core.fsmonitor='mkdir ../ran; false' status",
]
GIT_ALLOW = 'tools:\n  allow: ["exec(git *)"]\n  deny: ["exec(rm *)"]\n'


@pytest.mark.parametrize(
    ("line", "runs"),
    [
        (GIT_RUNS[0], "mkdir"),
        (GIT_RUNS[1], "mkdir"),
        (GIT_RUNS[2], "mkdir"),
        (GIT_RUNS[5], "mkdir"),
        ("env git -c core.sshCommand='rm -rf ~' fetch", "rm"),
        ("git -c core.pager='rm -rf ~' log", "rm"),
        ("git -c diff.x.textconv=rm diff", "rm"),
        ("git clone -c core.sshCommand='rm x' a b", "rm"),
    ],
)
def test_git_configuration_that_runs_its_value_is_decided_as_that_code(
    line: str, runs: str
) -> None:
    """The catalog's `[git_config] runs` names: the value is the command git runs."""
    found = analyse(line)
    assert not found.problems
    assert any(c.words[0] == runs and not c.screen for c in found.commands)
    assert verdict(GIT_ALLOW, line) == "deny"


@pytest.mark.parametrize(
    "line",
    [
        *GIT_RUNS[3:5],
        "git -c unknown.key=x status",  # names not known to run nothing fail closed
        "git --exec-path=/tmp/evil status",
        "git $opt status",
    ],
)
def test_git_configuration_that_can_run_a_command_is_not_analysable(line: str) -> None:
    assert analyse(line).problems
    assert verdict(GIT_ALLOW, line) == "deny"
    env_form = "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=x git status"
    assert verdict(GIT_ALLOW, env_form) == "deny"  # the form it is now consistent with


@pytest.mark.parametrize(
    "line",
    [
        "git -c user.name=bot -c user.email=bot@example.com commit -m x",
        "git -c color.ui=always log",
        "git -c core.quotePath=false status",
        "git -C sub status -c x",  # after the subcommand `-c` is the subcommand's own
    ],
)
def test_git_configuration_that_runs_nothing_stays_analysable(line: str) -> None:
    assert not analyse(line).problems
    assert verdict(GIT_ALLOW, line) == "allow"


@pytest.mark.parametrize(
    "line",
    [
        "git -c core.fsmonitor='rm -rf ~' status",
        "git -c alias.st='!rm -rf ~' st",
        "git -C . -c core.sshCommand='ssh; rm x' fetch",
    ],
)
def test_the_configured_command_meets_deny_rules(line: str) -> None:
    assert verdict(DENY_RM, line) == "deny"  # DENY_RM's callDefault is ask


@pytest.mark.skipif(not shutil.which("git"), reason="needs git")
@pytest.mark.parametrize("line", GIT_RUNS)
def test_git_runs_the_configured_command(line: str, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "X": "mkdir ../ran; false"}
    subprocess.run(["git", "init", "-q", str(repo)], env=env, check=True, timeout=10)
    subprocess.run(
        [BASH, "--norc", "--noprofile", "-c", line],
        cwd=repo,
        env=env,
        capture_output=True,
        timeout=10,
        stdin=subprocess.DEVNULL,
    )
    assert (tmp_path / "ran").exists()
