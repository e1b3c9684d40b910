"""Command knowledge as data (commands/commands.toml): the held-out bypasses as table cases.

Each line is decided under a policy, and what it claims about bash or git is proven by
running it in a temporary directory: the line really pushes, really runs the `rm`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from test_shell_variables import verdict

from policyctl.callrules.shell import analyse
from policyctl.catalog.commandfile import CommandsFile
from policyctl.catalog.commands import builtin_commands, tomllib
from policyctl.catalog.model import data_dir

BASH = shutil.which("bash") or "/bin/bash"
GIT = shutil.which("git")
README_IDIOM = 'tools:\n  allow: ["exec(git *)"]\n  ask: ["exec(git push *)"]\n'
GIT_DENY_RM = 'tools:\n  allow: ["exec(git *)"]\n  deny: ["exec(rm *)"]\n'
DENY_RM = 'tools:\n  allow: ["exec(*)"]\n  deny: ["exec(rm *)"]\n'
GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
}


def bash(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [BASH, "-c", line], cwd=cwd, env=GIT_ENV, capture_output=True, text=True, timeout=60
    )


# -- git's global options no longer hide the subcommand --------------------------------------

GLOBAL_OPTION_PUSHES = [
    "git -C . push origin HEAD:main",
    "git --no-pager push origin HEAD:main",
    "git -c user.name=x push origin HEAD:main",
    "git -P -c color.ui=never --no-optional-locks push origin HEAD:main",
]


@pytest.mark.parametrize("line", GLOBAL_OPTION_PUSHES)
def test_global_options_do_not_hide_a_push_from_an_ask_rule(line: str) -> None:
    assert verdict(README_IDIOM, line) == "ask"
    assert verdict(README_IDIOM, "git status") == "allow"


@pytest.mark.skipif(GIT is None, reason="needs git")
@pytest.mark.parametrize("line", GLOBAL_OPTION_PUSHES)
def test_git_really_pushes_with_those_options(line: str, tmp_path: Path) -> None:
    remote, work = tmp_path / "r.git", tmp_path / "w"
    setup = f"git init -q --bare {remote} && git init -q {work} && cd {work} && "
    setup += f"git commit -q --allow-empty -m x && git remote add origin {remote}"
    assert bash(setup, tmp_path).returncode == 0
    assert bash(line, work).returncode == 0
    assert bash("git rev-parse --verify -q main", remote).returncode == 0


def test_the_canonical_form_is_matched_and_the_written_words_still_meet_deny() -> None:
    found = analyse("git -C . --no-pager -c a.b=c push origin")
    (git,) = found.commands
    assert git.words == ("git", "push", "origin")
    assert git.written == ("git", "-C", ".", "--no-pager", "-c", "a.b=c", "push", "origin")
    deny_c = 'tools:\n  allow: ["exec(git *)"]\n  deny: ["exec(git -c *)"]\n'
    assert verdict(deny_c, "git -c user.name=x status") == "deny"
    assert verdict(deny_c, "git status -c x") == "allow"  # after the subcommand: its own
    allow_written = 'tools:\n  allow: ["exec(git -C /repo status)"]\n'
    assert verdict(allow_written, "git -C /repo status") == "allow"


# -- git options that run a program run it: decided as that program --------------------------

GIT_RUNS_RM = [
    "git ls-remote --upload-pack='rm -f victim; git-upload-pack' .",
    "git ls-remote --upload-pack 'rm -f victim; git-upload-pack' .",
    "git clone -q -u 'rm -f victim; git-upload-pack' . ../c1",
    "git clone -q --upload-pack='rm -f victim; git-upload-pack' . ../c2",
    "git archive --exec='rm -f victim; git-upload-archive' --remote=. HEAD",
    "git rebase -q --exec 'rm -f victim' HEAD~1",
    "git rebase -q -x 'rm -f victim' HEAD~1",
    "git -c core.editor='rm -f victim; true' commit -q --amend --allow-empty",
    "git -c alias.st='!rm -f victim' st",
    "git -C . -c core.sshCommand='rm -f victim; false' fetch -q ssh://h/x",
    "git clone -q -c core.sshCommand='rm -f victim; false' ssh://h/x ../c3",
]


@pytest.mark.parametrize("line", GIT_RUNS_RM)
def test_a_git_option_that_runs_a_program_meets_the_rules_of_that_program(line: str) -> None:
    assert verdict(GIT_DENY_RM, line) == "deny"
    # the program is decided as a command of its own: allowed where the rules allow it
    assert verdict(DENY_RM, line.replace("rm -f victim", "true")) == "allow"
    assert verdict(GIT_DENY_RM, line.replace("rm -f victim", "true")) == "deny"


@pytest.mark.skipif(GIT is None, reason="needs git")
@pytest.mark.parametrize("line", GIT_RUNS_RM)
def test_git_really_runs_the_rm(line: str, tmp_path: Path) -> None:
    work = tmp_path / "w"
    setup = f"git init -q {work} && cd {work} && git commit -q --allow-empty -m a && "
    setup += "git commit -q --allow-empty -m b && git config uploadarchive.allowUnreachable true"
    assert bash(setup, tmp_path).returncode == 0
    (work / "victim").write_text("x")
    bash(f"unset GIT_EDITOR EDITOR VISUAL; {line}", work)
    assert not (work / "victim").exists(), line


# -- incomplete option tables of the other runners -------------------------------------------

RUNNERS_RUN_RM = [
    "echo a | xargs --max-args 1 rm -f",
    "echo a | xargs --max-args=1 rm -f",
    "printf a | xargs --delimiter x rm -f",
    "echo a | xargs --max-procs 1 rm -f",
    "echo a | xargs --max-chars 100 rm -f",
    "echo a | xargs --max-lines=1 rm -f",
    "echo a | xargs --eof=END rm -f",
    "echo a | xargs --replace=a rm -f a",
    "echo x > list; xargs --arg-file list rm -f a",
    "bash -co errexit 'rm -f a'",
    "bash -ec 'rm -f a'",
    "bash -cO extglob 'rm -f a'",
    "sh -c -o errexit 'rm -f a'",
    "setpriv --reuid=$(id -u) rm -f a",
    "prlimit --nofile=100 rm -f a",
    "setarch x86_64 -R rm -f a",
    "setarch x86_64 rm -f a",
    "timeout -s KILL 5 rm -f a",
    "nice -n 1 rm -f a",
    "flock lk -c 'rm -f a'",
    "flock -w 1 lk rm -f a",
    "env -u X rm -f a",
]


@pytest.mark.parametrize("line", RUNNERS_RUN_RM)
def test_a_runner_option_table_no_longer_hides_the_rm(line: str, tmp_path: Path) -> None:
    assert verdict(DENY_RM, line) == "deny"
    if shutil.which(line.split()[0]):
        (tmp_path / "a").write_text("x")
        bash(line, tmp_path)
        assert not (tmp_path / "a").exists(), f"bash did not run the rm: {line}"


@pytest.mark.parametrize(
    ("line", "runs_command_named"),
    [
        ('"PATH"=x ls', "PATH=x"),  # quoted: not an assignment, the command word
        ("P\\ATH=x ls", "PATH=x"),
        ("'PATH=x' ls", "PATH=x"),
    ],
)
def test_a_quoted_assignment_is_a_command_word_as_bash_says(
    line: str, runs_command_named: str, tmp_path: Path
) -> None:
    assert analyse(line).commands[0].words[0] == runs_command_named
    assert "PATH=x: command not found" in bash(line, tmp_path).stderr


@pytest.mark.parametrize("line", ['env "PATH=/x" ls', "env 'LD_PRELOAD=x' ls", "PATH=/x ls"])
def test_a_quoted_assignment_through_env_is_still_a_rebinding(line: str, tmp_path: Path) -> None:
    assert analyse(line).problems
    if line.startswith('env "PATH'):
        assert "No such file" in bash(line, tmp_path).stderr  # env did take it as PATH


@pytest.mark.parametrize("line", ["cat <> .env", "cat 0<> .env", "exec 3<> .env"])
def test_a_read_write_redirection_is_not_allowed_under_a_read_deny(line: str) -> None:
    policy = 'tools:\n  allow: ["exec(*)", read]\n  deny: ["read(.env)"]\n'
    assert verdict(policy, line) != "allow"


# -- resource bounds ---------------------------------------------------------------------------


@pytest.mark.parametrize("word", ["xargs", "sudo", "env", "timeout 1", "nice", "setsid"])
def test_deep_nesting_is_unanalysable_not_a_traceback(word: str) -> None:
    found = analyse(f"{word} " * 1000 + "rm x")
    assert any("nested" in p.reason for p in found.problems)
    assert verdict(DENY_RM, f"{word} " * 1000 + "rm x") == "deny"


@pytest.mark.parametrize("runner", ["watch", "ssh host", "tmux new", "systemd-run"])
def test_many_words_after_a_joining_runner_cost_a_bounded_time(runner: str) -> None:
    line = f"{runner} 'a b' " + "a " * 30_000
    started = time.perf_counter()
    analyse(line)
    assert time.perf_counter() - started < 3  # before: 20-27 s (words joined from each word)


# -- files a modelled command reads or writes ---------------------------------------------------

FILES_POLICY = (
    'tools:\n  allow: ["exec(*)", read, write]\n  deny: ["read(.env)", "write(./protected/**)"]\n'
)


@pytest.mark.parametrize(
    ("line", "effect"),
    [
        ("cat .env", "deny"),
        ("head -n 5 .env", "deny"),
        ("tail -f .env", "deny"),
        ("grep -r KEY .env", "deny"),
        ("grep -e KEY .env", "deny"),
        ("rg KEY .env", "deny"),
        ("sed -n 1p .env", "deny"),
        ("less .env", "deny"),
        ("cp .env /tmp/x", "deny"),
        ("cp src protected/x", "deny"),
        ("mv a protected/x", "deny"),
        ("rm -rf protected/x", "deny"),
        ("tee protected/x", "deny"),
        ("sed -i s/a/b/ protected/x", "deny"),
        ("touch protected/x", "deny"),
        ("truncate -s 0 protected/x", "deny"),
        ("chmod 600 protected/x", "deny"),
        ("ln -s /etc/passwd protected/x", "deny"),
        ("dd if=.env of=/tmp/x", "deny"),
        ("dd if=/dev/zero of=protected/x", "deny"),
        ("find protected/x -name y -delete", "deny"),
        ("find protected/x -name y", "allow"),
        ("sudo cat .env", "deny"),
        ("timeout 5 cat .env", "deny"),
        ("cat README.md", "allow"),
        ("grep .env README.md", "allow"),  # the pattern is not a file
        ("chmod 600 README.md", "allow"),
        ("cp README.md /tmp/x", "allow"),
    ],
)
def test_file_operands_meet_the_read_and_write_rules(line: str, effect: str) -> None:
    assert verdict(FILES_POLICY, line) == effect, line


# -- the catalog itself --------------------------------------------------------------------------


def test_the_shipped_catalog_is_valid_against_its_model() -> None:
    text = (data_dir("commands") / "commands.toml").read_text(encoding="utf-8")
    CommandsFile.model_validate(tomllib.loads(text))


def test_each_entry_knows_where_it_was_written() -> None:
    catalog = builtin_commands()
    git = catalog.get("git")
    assert git is not None
    _, line = git.source.rsplit(":", 1)
    text = (data_dir("commands") / "commands.toml").read_text(encoding="utf-8").splitlines()
    assert text[int(line) - 1] == "[commands.git]"
    assert catalog.get("dash") is catalog.get("bash")  # one model, several names
