"""Lines where bash runs a command that appears in no command word: a variable name's subscript
given to a builtin (`test -v 'a[$(rm -rf ~)]'`), prompt expansion (`${x@P}`), indirection
(`${!x}`), compound-assignment keys (`a=([x]=1)`), builtins that run a string (`compgen -W/-C`,
`fc`), a function imported through the environment (`env 'BASH_FUNC_ls%%=...' bash -c ls`),
`xargs -I{} sh -c {}` and shells policyctl did not know (`rbash`). Each is unanalysable: a layer
with specifiers for `exec` gives it callDefault, and deny rules still judge what parsed.

Each line is also run by bash: the hidden command really runs, so the table lists holes.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from test_against_bash import commands_bash_runs
from test_shell_variables import ALLOW_ANY, ASK_ANY, DENY_RM, verdict

from policyctl.callrules.shell import analyse
from policyctl.callrules.wrappers import basename

BASH = shutil.which("bash") or "/bin/bash"

#: each line runs c1 in the same bash (seen by test_against_bash's DEBUG trap)
IN_PROCESS = [
    # a variable name's subscript, evaluated by the builtin that takes the name
    "test -v 'a[$(c1)]'",
    "[ -v 'a[$(c1)]' ]",
    "[ ! -v 'a[$(c1)]' ]",
    "[[ -v 'a[$(c1)]' ]]",
    "v='a[$(c1)]'; [[ -v $v ]]",
    "v='a[$(c1)]'; test -v \"$v\"",
    "op=-v; v='a[$(c1)]'; test $op \"$v\"",
    "op=-v; v='a[$(c1)]'; test ! $op \"$v\"",
    "op=-v; test x -a $op 'a[$(c1)]'",
    "printf -v 'a[$(c1)]' x",
    "declare 'a[$(c1)]=1'",
    "typeset 'a[$(c1)]=1'",
    "f(){ local 'a[$(c1)]=1'; }; f",
    "read 'a[$(c1)]' <<< x",
    "a=(1); unset 'a[$(c1)]'",
    "declare -n r='a[$(c1)]'; r=1",
    # prompt expansion, indirection and compound-assignment keys
    "x='$(c1)'; echo \"${x@P}\"",
    "x='`c1`'; echo \"${x@P}\"",
    "x='$(c1)'; y=${x@P}",
    "x='a[$(c1)]'; echo ${!x}",
    "x='a[$(c1)]'; echo ${!x@Q}",
    "a=('b[$(c1)]'); echo ${!a[0]}",
    "x='a[$(c1)]'; a=([x]=1)",
    "x='a[$(c1)]'; declare -a a=([x]=1)",
    "x='a[$(c1)]'; declare -a a; a+=([x]=1)",
    "x='a[$(c1)]'; a=([0]=1 [x]=2)",
    # a quoted compound assignment, parsed again by the declaration
    "declare -a 'a=($(c1))'",
    "declare -a a='($(c1))'",
    "a=(1); declare 'a=($(c1))'",
    "f() { local -a 'a=($(c1))'; }; f",
    "readonly -a 'a=($(c1))'",
    "typeset -A 'm=([k]=$(c1))'",
    # builtins that run a string
    "compgen -W '$(c1)' x",
    "compgen -W '`c1`' x",
    "compgen -C 'c1' x",
    "compgen -o default -C c1 x",
    "set -o history; history -s x; fc -e 'c1;:'",
]

#: each line makes a child process run `mkdir ran` (rbash forbids `> ran`)
CHILD = [
    "env 'BASH_FUNC_ls%%=() { mkdir ran; }' bash -c ls",
    "env -u HOME 'BASH_FUNC_ls%%=() { mkdir ran; }' bash -c ls",
    "env X=1 'BASH_FUNC_git%%=() { mkdir ran; }' bash -c 'git status'",
    "echo 'mkdir ran' | xargs -I{} sh -c {}",
    "echo 'mkdir ran' | xargs -I {} sh -c {}",
    "echo 'mkdir ran' | xargs -i sh -c {}",
    "echo 'mkdir ran' | xargs --replace sh -c {}",
    "echo 'mkdir ran' | xargs --replace=X sh -c X",
    "echo 'mkdir ran' | xargs -Ix sh -c x",
    "echo 'mkdir ran' | xargs -Ix sh -c 'x'",
    "rbash -c 'mkdir ran'",
]

#: the same builtins and forms where nothing hidden runs: still analysable and allowed
ANALYSABLE = [
    "test -v HOME",
    "[ -v 'a[1]' ]",
    "[[ -v a[@] ]]",
    "[[ -v x ]]",
    '[ "$a" = "$b" ]',
    'test -n "$x"',
    'test "$x"',
    'test "$a" = "$b" -a "$c" != x',
    'test "$f" -nt "$g"',
    "test $op foo",
    "printf -v 'a[0]' x",
    "declare -a a=(x y)",
    "a=([0]=x [1]=y)",
    "files=([abc]*.txt)",
    "unset 'a[1]'",
    "declare -n r=foo",
    "echo ${!prefix*} ${!prefix@} ${!a[@]} ${!a[*]} ${x@Q} ${a[@]} ${!}",
    "compgen -W 'start stop' s",
    "compgen -A function",
    "xargs -0 rm",
    "xargs -I{} mv {} dest/",
    "env FOO=1 git status",
]


@pytest.mark.parametrize(
    "line", IN_PROCESS + [line.replace("mkdir ran", "c1") for line in CHILD if "rbash" not in line]
)
def test_a_hidden_command_is_not_analysable(line: str) -> None:
    assert analyse(line).problems, line
    assert verdict(ALLOW_ANY, line) == "deny"
    assert verdict(ASK_ANY, line) == "ask"


@pytest.mark.parametrize(
    "line",
    [
        "complete -F _f git",  # runs only at completion time: refused all the same
        "compgen -F _f x",
        'compgen -W "$words" x',
        "fc -l",
        "sudo 'BASH_FUNC_ls%%=() { c1; }' bash -c ls",
        "declare -A m=([k]=v)",
        "echo x | xargs -I{} {}",
        "systemd-run -E 'BASH_FUNC_ls%%=() { c1; }' bash -c ls",
        "systemd-run --setenv=BASH_FUNC_ls%%='() { c1; }' bash -c ls",
        "setsid env 'BASH_FUNC_git%%=() { c1; }' git status",
    ],
)
def test_forms_that_can_run_a_string_are_refused_without_a_bash_run(line: str) -> None:
    assert analyse(line).problems
    assert verdict(ASK_ANY, line) == "ask"


@pytest.mark.parametrize("line", ANALYSABLE)
def test_the_same_forms_without_a_hidden_command_stay_analysable(line: str) -> None:
    assert not analyse(line).problems, analyse(line).problems
    assert verdict(ALLOW_ANY, line) == "allow"


@pytest.mark.parametrize(
    "line",
    [
        "env 'BASH_FUNC_ls%%=() { :; }' rm -rf x",  # rm was never decided
        "rbash -c 'rm -rf x'",
    ],
)
def test_deny_rules_still_judge_such_a_line(line: str) -> None:
    assert verdict(DENY_RM, line) == "deny"


@pytest.mark.parametrize(
    "shell", ["fish", "csh", "tcsh", "rc", "es", "xonsh", "elvish", "nu", "pwsh"]
)
def test_a_shell_whose_language_is_not_bash_is_not_analysable(shell: str) -> None:
    found = analyse(f"{shell} -c 'echo hi'")
    assert found.problems and "language" in found.problems[0].reason
    assert found.commands[0].words[0] == shell  # decided by its own name too


def test_rbash_is_transparent_so_its_script_meets_the_rules() -> None:
    assert [c.words for c in analyse("rbash -c 'c1 x'").commands] == [("c1", "x")]


@pytest.mark.parametrize(
    "shell", ["rbash", "mksh", "lksh", "ksh93", "pdksh", "oksh", "yash", "posh", "hush"]
)
def test_other_bash_like_shells_are_transparent(shell: str) -> None:
    found = analyse(f"{shell} -c 'git status && rm x'")
    assert [c.words[0] for c in found.commands] == ["git", "rm"]
    assert verdict(DENY_RM, f"{shell} -c 'rm x'") == "deny"


# -- against bash ---------------------------------------------------------------------------


@pytest.mark.skipif(not Path(BASH).exists(), reason="needs bash")
@pytest.mark.parametrize("line", IN_PROCESS)
def test_bash_runs_the_hidden_command(line: str, tmp_path: Path) -> None:
    found = {basename(c.words[0]) for c in analyse(line).commands if c.words and c.words[0]}
    assert "c1" in commands_bash_runs(line, tmp_path) - found


@pytest.mark.skipif(not Path(BASH).exists(), reason="needs bash")
@pytest.mark.parametrize("line", CHILD)
def test_a_child_process_runs_the_hidden_command(line: str, tmp_path: Path) -> None:
    if line.startswith("rbash") and not shutil.which("rbash"):
        pytest.skip("needs rbash")
    subprocess.run(
        [BASH, "--norc", "--noprofile", "-c", line],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        timeout=10,
        stdin=subprocess.DEVNULL,
    )
    assert (tmp_path / "ran").exists()
