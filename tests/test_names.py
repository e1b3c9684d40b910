"""Semantics 2 (normalisation), 3 (globs) and 10 (MCP names)."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policyctl.names import Glob, ascii_problem, mcp_tool_name, normalize

ALIASES = {"bash": "exec", "apply-patch": "apply_patch", "cron": "automations"}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("exec", "exec"),
        ("  EXEC ", "exec"),
        ("Bash", "exec"),
        ("BASH", "exec"),
        ("bash*", "bash*"),  # an alias applies to a whole entry only
        ("apply-patch", "apply_patch"),
        ("cron", "automations"),
        ("   ", ""),  # empty results are dropped by callers
        ("group:FS", "group:fs"),
    ],
)
def test_normalize(raw: str, expected: str) -> None:
    assert normalize(raw, ALIASES) == expected


@pytest.mark.parametrize(
    ("entry", "ok"),
    [
        ("exec", True),
        ("github__create_pr", True),
        ("group:fs", True),
        ("srv*__tool9", True),
        ("name@plugin/x.y-z", True),
        ("\u0435xec", False),  # Cyrillic small ie
        ("ex\u200bec", False),  # zero-width space
        ("exec tool", False),  # inner space
        ("ex?c", False),
    ],
)
def test_ascii_rule(entry: str, ok: bool) -> None:
    assert (ascii_problem(entry) is None) is ok


def test_ascii_problem_names_the_character() -> None:
    problem = ascii_problem("\u0435xec")
    assert problem is not None and "U+0435" in problem and "CYRILLIC" in problem


@pytest.mark.parametrize(
    ("pattern", "name", "matches"),
    [
        ("*", "anything", True),
        ("*", "", True),
        ("web_*", "web_search", True),
        ("web_*", "web_", True),
        ("web_*", "xweb_search", False),  # anchored at the start
        ("*_search", "web_search", True),
        ("*_search", "web_search2", False),  # anchored at the end
        ("srv*__tool9", "srv12__tool9", True),
        ("srv*__tool9", "srv1__tool90", False),
        ("a*b*c", "abc", True),
        ("a*b*c", "aXbYc", True),
        ("a*b*c", "acb", False),
        ("ab*ba", "aba", False),  # head and tail may not overlap
        ("ab*ba", "abba", True),
        ("web?", "web?", True),  # only * is special
        ("web?", "webs", False),
        ("[ab]", "[ab]", True),
        ("[ab]", "a", False),
        ("sessions_*", "sessions-list", False),
        ("*:*", "group:fs", True),
        ("**", "x", True),  # ** is just two stars
    ],
)
def test_glob_table(pattern: str, name: str, matches: bool) -> None:
    assert Glob.compile(pattern).matches(name) is matches


def _reference_glob(pattern: str, name: str) -> bool:
    """Dynamic programming over the pattern: obviously right, slow."""
    m, n = len(pattern), len(name)
    dp = [[False] * (n + 1) for _ in range(m + 1)]
    dp[0][0] = True
    for i in range(1, m + 1):
        dp[i][0] = dp[i - 1][0] and pattern[i - 1] == "*"
        for j in range(1, n + 1):
            if pattern[i - 1] == "*":
                dp[i][j] = dp[i - 1][j] or dp[i][j - 1]
            else:
                dp[i][j] = dp[i - 1][j - 1] and pattern[i - 1] == name[j - 1]
    return dp[m][n]


@given(st.text(alphabet="ab*_", max_size=8), st.text(alphabet="ab_", max_size=12))
def test_glob_agrees_with_reference(pattern: str, name: str) -> None:
    assert Glob.compile(pattern).matches(name) == _reference_glob(pattern, name)


def test_pathological_glob_is_not_exponential() -> None:
    pattern = "*a" * 30 + "*b"
    name = "a" * 20_000
    start = time.perf_counter()
    assert Glob.compile(pattern).matches(name) is False
    # A backtracking matcher needs astronomically long here; a forward scan needs microseconds.
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize(
    ("server", "tool", "expected"),
    [
        ("github", "create_pr", "github__create_pr"),
        (" github ", " create pr ", "github__create-pr"),
        ("", "", "mcp__tool"),
        ("9lives", "x", "mcp-9lives__x"),
        ("my.server", "a/b", "my-server__a-b"),
    ],
)
def test_mcp_names(server: str, tool: str, expected: str) -> None:
    assert mcp_tool_name(server, tool) == expected


def test_mcp_name_lengths_and_collisions() -> None:
    long_server = "s" * 50
    name = mcp_tool_name(long_server, "t" * 80)
    server_part = name.split("__")[0]
    assert len(server_part) == 30
    assert len(name) == 64
    first = mcp_tool_name("srv", "x" * 80)
    second = mcp_tool_name("srv", "x" * 80, [first])
    third = mcp_tool_name("srv", "x" * 80, [first, second])
    assert len({first, second, third}) == 3
    assert second.endswith("-2") and third.endswith("-3")
    assert max(len(first), len(second), len(third)) <= 64
