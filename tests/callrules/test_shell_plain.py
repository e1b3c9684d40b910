"""Plain lines skip the parser: for every line `plain_items` accepts, the analysis is the one
the tree-sitter path gives (same commands, texts, problems and directory changes, in order).

The generator mixes the words that matter to the shell stage (wrappers, carriers, shells,
reserved and declaration words, assignments, the shapes tree-sitter-bash misreads) with
random words over the plain alphabet, joined by every list and pipeline operator.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from policyctl.callrules import shell
from policyctl.callrules.commands import Item
from policyctl.callrules.shell import DEFAULT_LIMITS, ShellLimits
from policyctl.callrules.shell_plain import plain_items

TOKENS = [
    *("git", "rm", "ls", "echo", "sudo", "env", "timeout", "5", "nice", "-n", "xargs", "find"),
    *("-exec", ";", "+", "tee", "cd", "sh", "bash", "-c", "-lc", "FOO=1", "_=1", "A+=2"),
    *("1a=b", "=", "==", "-", "--", "%1", "@x", "a@b", "in", "do", "done", "if", "then", "fi"),
    *("time", "coproc", "export", "local", "unset", "declare", "command", "-v", "exec"),
    *("builtin", "eval", "source", ".", "su", "-u", "bob", "doas", "setsid", "ssh", "busybox"),
    *("alias", "trap", "pushd", "popd", "=x", "x=", "a=b=c", ":", "..", "/x", "m+:i", "s:-"),
    "x:y",
]
OPERATORS = [" && ", " || ", " | ", "; ", " & ", "|", "&&", ";", "&", " |& ", " ;; ", "  "]
ALPHABET = "abgirmt_-./=,:@%+0159AZ"

words = st.one_of(st.sampled_from(TOKENS), st.text(ALPHABET, min_size=1, max_size=6))
commands = st.lists(words, max_size=5).map(" ".join)


def _join(cmds: list[str], ops: list[str], trailing: bool) -> str:
    line = "".join(c + ops[i % len(ops)] for i, c in enumerate(cmds))
    return line if trailing else line[: len(line) - len(ops[(len(cmds) - 1) % len(ops)])]


lines = st.builds(
    _join,
    st.lists(commands, min_size=1, max_size=5),
    st.lists(st.sampled_from(OPERATORS), min_size=1, max_size=3),
    st.booleans(),
)


def _parsed(line: str) -> list[Item]:
    return shell._analyse(line, 0, DEFAULT_LIMITS, time.monotonic() + 10, plain=False)


def _plain(line: str) -> list[Item] | None:
    deadline = time.monotonic() + 10
    return plain_items(line, 0, lambda s, d: shell._analyse(s, d, DEFAULT_LIMITS, deadline))


@settings(max_examples=1500, deadline=None)
@given(lines)
@example("x == y")  # the grammar drops the `==` word
@example("git@x a")  # the grammar refuses `@` in a command word
@example("- FOO=1 rm x")  # the grammar drops `- FOO=1`
@example("x= 58:")
@example("i=5l s:- unset")
@example("_=1 rm -rf /")
@example("a=b=c time git status")
@example("sudo -u bob rm x | xargs -n 1 rm && sh -c ls; env A=1 timeout 5 rm &")
def test_a_plain_line_is_analysed_as_the_parser_does(line: str) -> None:
    found = _plain(line)
    if found is not None:
        assert found == _parsed(line)


@pytest.mark.parametrize(
    "line",
    [
        "git status && ls -la src | grep module; git log -n 3 || npm run test",
        "npm run build &",
        "FOO=1 make CC=gcc -j 4",
        "git clone git@github.com:acme/x.git",
    ],
)
def test_common_lines_skip_the_parser(line: str) -> None:
    assert _plain(line) is not None
    assert _plain(line) == _parsed(line)


@pytest.mark.parametrize(
    "line",
    [
        *("git commit -m 'x'", "echo $HOME", "ls *.py", "a && && b", "&& a", "a\nb"),
        *("if a; then b; fi", "export A=1", "x == y", "- A=1 rm", "git@x", "x= y", "cat < f"),
        "a # b",
    ],
)
def test_anything_else_goes_to_the_parser(line: str) -> None:
    assert _plain(line) is None


def test_a_plain_line_keeps_the_time_limit() -> None:
    (problem,) = shell.analyse("ls && git status", ShellLimits(parse_seconds=-1.0)).problems
    assert "parsing took longer" in problem.reason
