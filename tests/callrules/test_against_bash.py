"""Differential check against bash itself: every simple command bash runs for a line is one
the shell stage found (or the line is reported as unanalysable).

bash runs each generated line in an empty directory with no PATH, every command "found" by a
`command_not_found_handle` that succeeds, and a DEBUG trap that prints each command's first
word. Nothing outside the directory can be touched: the names are c0..c9 and only builtins
exist. Lines come from a seeded generator of nested constructs (lists, pipelines, subshells,
groups, substitutions, heredocs, loops, conditionals, functions, `time`, `coproc`).
"""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from policyctl.callrules.shell import analyse
from policyctl.callrules.wrappers import basename

BASH = shutil.which("bash") or "/bin/bash"
NAMES = [f"c{i}" for i in range(10)]
PROBE = (
    "exec 3>&1 1>/dev/null 2>/dev/null; "  # the trap's report on fd 3, the rest discarded
    "command_not_found_handle() { return 0; }; "
    'trap \'printf "%s\\n" "${BASH_COMMAND%% *}" >&3\' DEBUG; set -T; '
)

FORMS = [
    "{a} && {b}",
    "{a} || {b}",
    "{a} | {b}",
    "{a}; {b}",
    "( {a} )",
    "{{ {a}; }}",
    "echo $({a})",
    "echo `{a}`",
    "x=$({a})",
    "if {a}; then {b}; else {c}; fi",
    "for v in 1; do {a}; done",
    "case a in a) {a};; esac",
    "! {a}",
    "time {a}",
    "cat <<EOF\n  $({a})\nEOF\n{b}",
    "cat <<EOF | {a}\nhi\nEOF",
    'echo "a $({a}) b"',
    "f() {{ {a}; }}; f",
    "{a} > out",
    "echo ${{y:-$({a})}}",
    "[[ -n $({a}) ]]",
    "(( $({a}) + 1 ))",
    "time {{ {a}; }}",
    "echo `echo \\`{a}\\``",
    "{a} &\n{b}",
    "coproc {a}",
    "while {a}; do break; done",
    "cat < <({a})",
    "echo $( ({a}) )",
    "arr=( $({a}) )",
    "echo ${{arr[$({a})]}}",
    "{a} # note\n{b}",
    "cat <<< $({a})",
    "until {a}; do break; done",
    "for ((i=0; i<1; i++)); do {a}; done",
    "function g {{ {a}; }}; g",
    "echo $( $({a}) )",
    "echo >({a})",
    "{a} |& {b}",
    '[ "$({a})" ]',
    "declare z=$({a})",
    "{{ {a}; }} 2>&1",
    "{a} 2>&1 | {b}",
    "{a} && {b} &",
    "select v in 1; do {a}; break; done",
    "cat <<-EOF\n\t$({a})\n\tEOF",
]


def generate(rnd: random.Random, depth: int = 0) -> str:
    name = rnd.choice(NAMES)
    args = " ".join(rnd.choice(["a", "'b c'", '"d"', "$x", "-f", "e\\\nf"]) for _ in range(2))
    if depth > 2 or rnd.random() < 0.3:
        return f"{name} {args}"
    parts = {k: generate(rnd, depth + 1) for k in "abc"}
    return rnd.choice(FORMS).format(**parts)


def commands_bash_runs(line: str, sandbox: Path) -> set[str]:
    done = subprocess.run(
        [BASH, "--norc", "--noprofile", "-c", PROBE + line + "\n"],
        capture_output=True,
        text=True,
        cwd=sandbox,
        env={"PATH": "/nonexistent", "HOME": str(sandbox)},
        timeout=10,
        stdin=subprocess.DEVNULL,
    )
    return {w for w in done.stdout.split() if w in NAMES}


@pytest.mark.skipif(not Path(BASH).exists(), reason="needs bash")
def test_every_command_bash_runs_is_found(tmp_path: Path) -> None:
    rnd = random.Random(20261201)
    checked = 0
    for _ in range(200):
        line = generate(rnd)
        found = analyse(line)
        if found.problems:
            continue  # reported as unanalysable: never allowed by a rule it cannot verify
        ours = {basename(c.words[0]) for c in found.commands if c.words and c.words[0]}
        ran = commands_bash_runs(line, tmp_path)
        assert ran <= ours, f"bash ran {sorted(ran - ours)} in {line!r}"
        checked += 1
    assert checked >= 80
