"""Ways of setting a variable the analysis depends on other than `NAME=value` (`read PATH`,
`printf -v PATH`, namerefs, `unset PATH`, `set -k`, loops, arithmetic), and arithmetic that
evaluates a variable's value as code. Each such line is unanalysable: a layer with specifiers
for `exec` gives it callDefault, and deny rules still judge its commands.

The cases are checked against bash itself too: each line really makes `git` run another
program (or a hidden command run), so the table lists holes, not hypotheses."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from test_against_bash import commands_bash_runs

from policyctl import RunContext, load_policy_text, resolve
from policyctl.callrules.shell import analyse
from policyctl.callrules.wrappers import basename

DENY_RM = 'tools:\n  callDefault: ask\n  deny: ["exec(rm *)"]\n  allow: [exec]\n'
#: every analysable line is allowed: what is not allowed is what could not be analysed
ALLOW_ANY = 'tools:\n  allow: ["exec(*)"]\n'
ASK_ANY = ALLOW_ANY.replace("allow:", "callDefault: ask\n  allow:")
BASH = shutil.which("bash") or "/bin/bash"


def verdict(policy: str, command: str) -> str:
    r = resolve(load_policy_text(policy), RunContext(provider="openai", workspace="/tmp"))
    return str(r.decide_call("exec", {"command": command}).verdict.effect.label)


#: each line makes the `git` after it run `./git`, `./evil/git` or `./1/git` (stdin: `evil`)
REBINDING_LINES = [
    "read PATH; git",
    "read -r -a PATH; git",
    "read -ra PATH; git",
    "read -u 0 -p x PATH; git",
    "read -- PATH; git",
    "read 'PATH[0]'; git",
    "mapfile -t PATH; git",
    "readarray -t PATH; git",
    "mapfile -C 'PATH=evil #' -c 1 lines; git",
    "printf -v PATH evil; git",
    "printf -vPATH evil; git",
    "printf -v 'PATH[0]' evil; git",
    "getopts 1 PATH -1; git",
    "unset PATH; git",
    "unset -v PATH; git",
    "f() { local PATH; git; }; f",
    "f() { declare PATH; git; }; f",
    "f() { typeset -x PATH; git; }; f",
    "declare -n r=PATH; r=evil; git",
    "typeset -n r='PATH'; r=evil; git",
    "declare -n r; r=PATH; r=evil; git",
    "r=PATH; declare -n r; r=evil; git",
    "f() { local -n r=$1; r=evil; git; }; f PATH",
    "declare -n r=PATH; read r; git",
    'n=PATH; declare "$n=evil"; git',
    "n=PATH=evil; export $n; git",
    "set -k; git PATH=evil",
    "set -ek; git PATH=evil",
    "set -o keyword; git PATH=evil",
    "shopt -os keyword; git PATH=evil",
    "shopt -s -o keyword; git PATH=evil",
    "let PATH=1; git",
    "((PATH=1)); git",
    ": $((PATH=1)); git",
    ": $[PATH=1]; git",
    "for PATH in evil; do git; done",
    "select PATH in evil; do git; break; done",
    "PATH[0]=evil; git",
    "PATH[0]+=/../evil; git",
    "[[ PATH=1 -eq 1 ]]; git",
    "a=(0); : ${a[PATH=1]}; git",
    "a[PATH=1]=0; git",
    "s=abc; : ${s:PATH=1}; git",
    "x=PATH=1; : $((x)); git",
    "x=PATH=1; ((x)); git",
    "x=PATH=1; let x; git",
    "x=PATH=1; [[ x -eq 1 ]]; git",
    "declare -i z; z=PATH=1; git",
    "command declare -n r=PATH; r=evil; git",
    "builtin read PATH; git",
    "builtin printf -v PATH evil; git",
    "printf -v a -v PATH evil; git",
]

#: the same builtins and forms on names nothing depends on, and printing or exporting
ANALYSABLE = [
    "read -r line",
    "IFS_SAVED=1 read -r line",
    "read -p PATH x",
    "read",
    "printf '%s\\n' PATH",
    "printf -- -v PATH x",
    "mapfile -t lines",
    "mapfile",
    "getopts ab opt",
    "sleep 1 & wait -n -p pid",
    "wait",
    "unset foo bar",
    "unset -f PATH",
    "export PATH",
    "export FOO=1",
    "export -n FOO",
    "readonly PATH",
    "declare -p PATH",
    "declare -n r=foo",
    "declare x=1 y",
    "set -- a b",
    "set -eo pipefail",
    "set +k",
    "shopt -s nullglob",
    "shopt -os pipefail",
    "shopt -ou keyword",
    "let 1+2",
    "((1 + 2))",
    "echo $((2 * 3)) $[1] $(( $# + $? ))",
    "echo $(( ${#a[@]} - 1 )) $(( ${#s} ))",
    "echo ${a[0]} ${a[@]} ${#a[*]} ${s:1:2} ${s:-x} ${s: -1}",
    "[[ 1 -eq 1 ]]",
    "[[ $x == y ]]",
    ": ${FOO:=x}",
    "for f in a b; do git x; done",
    "x=$((1 + 1))",
]


@pytest.mark.parametrize("line", REBINDING_LINES)
def test_setting_a_rebinding_variable_is_not_analysable(line: str) -> None:
    assert analyse(line).problems
    assert verdict(ALLOW_ANY, line) == "deny"
    assert verdict(ASK_ANY, line) == "ask"


@pytest.mark.parametrize(
    "line",
    [
        "read -r IFS",
        "mapfile -t IFS",
        "printf -v LD_PRELOAD x",
        "sleep 1 & wait -n -p PATH",
        ": ${PATH:=/tmp/evil}",
        ": ${HOME=/tmp/evil}",
        "export -n PATH",
        "declare +x PATH",
        "for ((i = 0; i < 3; i++)); do git status; done",  # values are not followed
    ],
)
def test_other_rebinding_names_count_too(line: str) -> None:
    assert verdict(ASK_ANY, line) == "ask"


@pytest.mark.parametrize("line", ANALYSABLE)
def test_the_same_forms_on_other_names_stay_analysable(line: str) -> None:
    assert not analyse(line).problems
    assert verdict(ALLOW_ANY, line) == "allow"


@pytest.mark.parametrize(
    "line",
    [
        "read PATH; rm x",
        "unset PATH && rm -rf /",
        "for PATH in x; do rm y; done",
        "echo $(( $(rm x) + 1 ))",  # commands inside arithmetic are still found
        "[[ $(rm w) -eq 1 ]]",
    ],
)
def test_deny_rules_still_judge_such_a_line(line: str) -> None:
    assert verdict(DENY_RM, line) == "deny"


@pytest.mark.parametrize(
    "line", ['printf "$f" PATH evil', "read $opt PATH", "set $o", "unset $n", "export -n $n"]
)
def test_an_option_or_name_that_is_an_expansion_is_not_analysable(line: str) -> None:
    assert analyse(line).problems


#: each line runs the command c1 from a variable's value, where no rule sees it
ARITHMETIC_INJECTION = [
    "x='a[$(c1)]'; : $((x))",
    "x='a[$(c1)]'; (( x ))",
    "x='a[$(c1)]'; let x",
    "x='a[$(c1)]'; [[ $x -eq 0 ]]",
    "x='a[$(c1)]'; a=(1); : ${a[x]}",
    "x='a[$(c1)]'; s=abc; : ${s:x}",
    "x='a[$(c1)]'; a[x]=1",
    "x='a[$(c1)]'; echo \"$((x))\"",
    "x='a[$(c1)]'; cat <<EOF\n$((x))\nEOF",
    "x='a[$(c1)]'; declare -i z; z=x",
    "x='a[$(c1)]'; y=x; for ((; y; )); do break; done",
]


@pytest.mark.parametrize("line", ARITHMETIC_INJECTION)
def test_arithmetic_over_a_variable_is_not_analysable(line: str) -> None:
    found = analyse(line)
    assert "c1" not in {c.words[0] for c in found.commands if c.words}
    assert found.problems
    assert verdict(ASK_ANY, line) == "ask"


# -- against bash ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`good/git` is the one PATH finds; `./git`, `evil/git` and `1/git` are the others."""
    root = tmp_path_factory.mktemp("rebind")
    for where, says in [("good", "GOOD"), (".", "EVIL"), ("evil", "EVIL"), ("1", "EVIL")]:
        (root / where).mkdir(exist_ok=True)
        script = root / where / "git"
        script.write_text(f"#!/bin/sh\necho {says}\n")
        script.chmod(0o755)
    return root


def git_that_bash_runs(line: str, root: Path) -> str:
    done = subprocess.run(
        [BASH, "--norc", "--noprofile", "-c", line],
        capture_output=True,
        text=True,
        cwd=root,
        env={"PATH": str(root / "good"), "HOME": str(root)},
        input="evil\n",
        timeout=10,
    )
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr


@pytest.mark.skipif(not Path(BASH).exists(), reason="needs bash")
@pytest.mark.parametrize("line", REBINDING_LINES)
def test_each_rebinding_line_changes_what_git_runs_in_bash(line: str, sandbox: Path) -> None:
    assert git_that_bash_runs(line, sandbox) == "EVIL"
    assert git_that_bash_runs(line.replace("PATH", "OTHER"), sandbox) == "GOOD"


@pytest.mark.skipif(not Path(BASH).exists(), reason="needs bash")
@pytest.mark.parametrize("line", ARITHMETIC_INJECTION)
def test_each_injection_runs_a_hidden_command_in_bash(line: str, tmp_path: Path) -> None:
    found = {basename(c.words[0]) for c in analyse(line).commands if c.words and c.words[0]}
    assert "c1" in commands_bash_runs(line, tmp_path) - found
