"""The shell stage on its own: which commands, accesses and problems a line yields."""

from __future__ import annotations

import pytest

from policyctl.callrules.shell import ShellLimits, analyse


def commands(line: str) -> list[tuple[str | None, ...]]:
    return [c.words for c in analyse(line).commands]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("FOO=1 BAR=$(id) git 'st'\"atus\"", [("git", "status"), ("id",)]),
        ("a && b || c; d | e & f\ng", [("a",), ("b",), ("c",), ("d",), ("e",), ("f",), ("g",)]),
        ("(a; (b)) && { c; }", [("a",), ("b",), ("c",)]),
        ("x $(y `z`)", [("x", None), ("y", None), ("z",)]),
        ("diff <(a) >(b)", [("diff", None, None), ("a",), ("b",)]),
        ("echo $'a\\tb' $\"c\"", [("echo", "a\tb", "c")]),
        ("echo ~/x a*b {a,b} [ab] x{1..3}", [("echo", "~/x", None, None, None, None)]),
        ("[ -f x ] && [[ -d y ]]", []),  # tests are not commands
        ("env -i A=1 nice -n 3 timeout 5 time -p command -v git", [("git",)]),
        ("timeout 5", [("timeout", "5")]),
        ("env", [("env",)]),
        ("sudo -u bob -- rm x", [("sudo", "-u", "bob", "--", "rm", "x"), ("rm", "x")]),
        (
            "find . -exec rm {} \\; -exec ls \\;",
            [("find", ".", "-exec", "rm", "{}", ";", "-exec", "ls", ";"), ("rm", None), ("ls",)],
        ),
        ("local a=$(b) c=1", [("local", None, "c=1"), ("b",)]),
        ("unset f", [("unset", "f")]),
        ("bash -c 'a; sh -c \"b\"'", [("a",), ("b",)]),
        # assignments the grammar reads as the command word; bash runs `rm`
        ("_=1 rm -rf /", [("rm", "-rf", "/")]),
        ("x=1 _=2 _+=3 A+=4 rm x", [("rm", "x")]),
        ("_=1", []),
        ("'_=1' rm", [("_=1", "rm")]),  # quoted: a command word for bash too
        ("rm _=1", [("rm", "_=1")]),
    ],
)
def test_commands(line: str, expected: list[tuple[str | None, ...]]) -> None:
    found = analyse(line)
    assert not found.problems, found.problems
    assert commands(line) == expected


def test_declaration_words_are_unknown_when_expanded() -> None:
    (cmd, sub) = analyse("export A=$(id)").commands
    assert cmd.words == ("export", None) and sub.words == ("id",)


def test_xargs_payload_has_an_open_tail() -> None:
    found = analyse("ls | xargs -0 -n 2 rm -f")
    assert [(c.words, c.open_tail) for c in found.commands] == [
        (("ls",), False),
        (("xargs", "-0", "-n", "2", "rm", "-f"), False),
        (("rm", "-f"), True),
    ]
    assert analyse("xargs").commands[-1].words == ("echo",)  # xargs runs echo by default


@pytest.mark.parametrize(
    ("line", "accesses"),
    [
        ("a > x >> y &> z &>> w >| v", [("write", p) for p in "xyzwv"]),
        ("a < x", [("read", "x")]),
        ("a 2>&1 >&2 1>&- > /dev/null", []),
        ("a <<< s", []),
        ("a >&file", [("write", "file")]),
        ("cat <<'EOF'\n$(not run)\nEOF", []),
        ("a > $F", [("write", None)]),
        ("tee -a x -- y", [("write", "x"), ("write", "y")]),
        ("{ a; } > out", [("write", "out")]),
        ("while read l; do :; done < in", [("read", "in")]),
    ],
)
def test_redirections_are_accesses(line: str, accesses: list[tuple[str, str | None]]) -> None:
    found = analyse(line)
    assert [(a.mode, a.path) for a in found.accesses] == accesses


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("eval ls", "eval"),
        ("source x", "source"),
        (". x", ". runs"),
        ("$X y", "expansion"),
        ("${X} y", "expansion"),
        ("$(echo rm) y", "expansion"),
        ("trap 'x' INT", "trap"),
        ("sh", "from its input"),
        ("bash -c", "without a script"),
        ("bash -c $S", "expansion"),
        ("bash -c -- $S", "not literal"),
        ("env -S 'a b'", "splits a string"),
        ("timeout --nope 3 a", "not known"),
        ("sudo -Z a", "not known"),
        ("xargs -Z a", "not known"),
        ("find -exec a", "closing"),
        ("echo 'open", "parser"),
        ("a <> f", "parser"),
        ("cat <<EOF\nx", "parser"),
        ("(a) > f g", "words after"),
        ("a\x00b", "NUL"),
        ("a \ud800", "not valid text"),
    ],
)
def test_what_cannot_be_analysed(line: str, reason: str) -> None:
    found = analyse(line)
    assert found.problems, found
    assert any(reason in p.reason for p in found.problems), found.problems


def test_ansi_c_nul_makes_the_word_unknown() -> None:
    assert analyse("echo $'\\x00'").commands[0].words == ("echo", None)
    assert analyse("$'\\x00' x").problems


def test_size_limit() -> None:
    line = "echo " + "a" * 100
    assert not analyse(line).problems
    (problem,) = analyse(line, ShellLimits(max_bytes=50)).problems
    assert "longer than 50 bytes" in problem.reason


def test_parse_time_limit_and_the_parser_recovers() -> None:
    line = "echo 'a' && ls | grep x; " * 400  # parsed (quotes), and in chunks (its size)
    assert "parsing took longer" in analyse(line, ShellLimits(parse_seconds=0.0)).problems[0].reason
    again = analyse(line)  # a cancelled parse must not leak into the next one
    assert not again.problems and len(again.commands) == 1200


def test_the_parse_deadline_covers_nested_scripts() -> None:
    (problem,) = analyse("sh -c 'ls'", ShellLimits(parse_seconds=-1.0)).problems
    assert "parsing took longer" in problem.reason


def test_depth_limit() -> None:
    line = "sh -c \"sh -c 'rm x'\""
    assert analyse(line).commands[0].words == ("rm", "x")
    (problem,) = analyse(line, ShellLimits(max_depth=1)).problems
    assert "deeper than 1" in problem.reason


def test_deep_nesting_does_not_exhaust_the_stack() -> None:
    line = "echo " + "$(" * 2000 + "rm x" + ")" * 2000
    found = analyse(line)
    assert ("rm", "x") in [c.words for c in found.commands]


def test_changes_directory() -> None:
    assert analyse("cd x && a > f").changes_directory
    assert analyse("env -C /tmp a").changes_directory
    assert not analyse("a > f").changes_directory


def test_long_texts_are_clipped_in_provenance() -> None:
    found = analyse("echo " + "a " * 500 + "; eval x" + " y" * 100)
    assert all(len(c.text) <= 200 for c in found.commands)
    assert all(len(p.text) <= 80 for p in found.problems)


def test_code_points_that_crash_the_grammar_are_refused() -> None:
    """tree-sitter-bash 0.25 can crash on `{` followed by a code point beyond plane 2 (found
    by hypothesis); the line is refused before it reaches the parser. A subprocess, so a
    regression fails this test instead of killing the test run."""
    import subprocess
    import sys

    lines = ["a{\U000e3b70", "{\U000a54b8}", "\u00bbl{\U000e3b70\u00a9f", "a{\U0010fffd"]
    code = (
        "from policyctl.callrules.shell import analyse\n"
        f"for line in {lines!r}:\n"
        "    assert 'beyond U+2FFFF' in analyse(line).problems[0].reason\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert not analyse("git commit -m '\U0001f389 {release}'").problems  # emoji are fine
