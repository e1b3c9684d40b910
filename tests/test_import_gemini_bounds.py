"""Imported regular expressions are bounded: a Gemini CLI regex too long or too deeply nested
is reported where it is written (PC150) and imported towards refusing, and every regex within
the bounds is read in bounded time."""

from __future__ import annotations

import contextlib
import io
import time
from pathlib import Path

import pytest

from policyctl.cli.main import main
from policyctl.importers.gemini_regex import (
    MAX_REGEX_DEPTH,
    MAX_REGEX_LENGTH,
    argument_prefix,
    command_regex,
    regex_too_large,
)

NESTED_5000 = "(" * 5000 + "git" + ")" * 5000
STARS_120K = "[a-z]*" * 20_000


def _import(tmp_path: Path, body: str) -> tuple[int, str, str]:
    src = tmp_path / "rules.toml"
    src.write_text(body, encoding="utf-8")
    out = tmp_path / "policy.yaml"
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["import", str(src), "--from", "gemini", "-o", str(out)])
    return code, err.getvalue(), out.read_text(encoding="utf-8") if out.exists() else ""


def _rule(decision: str, key: str, regex: str) -> str:
    return (
        '[[rule]]\ntoolName = "run_shell_command"\n'
        f"decision = \"{decision}\"\npriority = 100\n{key} = '{regex}'\n"
    )


@pytest.mark.parametrize(
    ("decision", "key", "regex", "imported"),
    [
        ("deny", "commandRegex", NESTED_5000, "exec(*)"),  # crashed (RecursionError)
        ("ask_user", "commandRegex", NESTED_5000, "exec(*)"),
        ("allow", "commandRegex", NESTED_5000, None),
        ("allow", "commandRegex", STARS_120K, None),  # took 14 s
        ("deny", "commandRegex", STARS_120K, "exec(*)"),
        ("deny", "argsPattern", '"command":"' + NESTED_5000, "exec(*)"),
    ],
    ids=["deny-nested", "ask-nested", "allow-nested", "allow-stars", "deny-stars", "args"],
)
def test_a_regex_beyond_the_bounds_is_reported_where_written(
    tmp_path: Path, decision: str, key: str, regex: str, imported: str | None
) -> None:
    started = time.monotonic()
    code, err, policy = _import(tmp_path, _rule(decision, key, regex))
    assert time.monotonic() - started < 5
    assert code == 0, err
    assert "Traceback" not in err
    line = next(x for x in err.splitlines() if "PC150" in x)
    assert line.startswith(f"{tmp_path / 'rules.toml'}:5:"), line  # file:line:col of the key
    assert "too large to read" in line
    assert "commandPrefix" in err  # the fix
    if imported is None:
        assert "exec(" not in policy
    else:
        assert f"'{imported}'" in policy or f'"{imported}"' in policy or imported in policy


@pytest.mark.parametrize(
    ("regex", "why"),
    [
        ("git (commit|push)", None),
        ("a" * MAX_REGEX_LENGTH, None),
        ("a" * (MAX_REGEX_LENGTH + 1), "characters long"),
        ("(" * MAX_REGEX_DEPTH + "a" + ")" * MAX_REGEX_DEPTH, None),
        ("(" * (MAX_REGEX_DEPTH + 1) + "a" + ")" * (MAX_REGEX_DEPTH + 1), "nest 33 deep"),
        ("\\(" * 100 + "a", None),  # escaped parentheses are no groups
    ],
)
def test_regex_too_large(regex: str, why: str | None) -> None:
    found = regex_too_large(regex)
    assert (found is None) if why is None else (found is not None and why in found)


def _at_the_bounds() -> list[str]:
    n = MAX_REGEX_LENGTH
    deep = "(" * MAX_REGEX_DEPTH + "a|b" + ")" * MAX_REGEX_DEPTH
    return [
        ".*" * (n // 2),
        "[a-z]*" * (n // 6),
        "a" * n,
        "a " * (n // 2),
        "(a|b)" * (n // 5),
        (deep * (n // len(deep)))[:n],
        "(" * MAX_REGEX_DEPTH + ("a" * (n - 2 * MAX_REGEX_DEPTH)) + ")" * MAX_REGEX_DEPTH,
        "(" * MAX_REGEX_DEPTH + "a" * (n - MAX_REGEX_DEPTH),  # unbalanced
    ]


@pytest.mark.parametrize("regex", _at_the_bounds(), ids=lambda r: r[:12])
def test_every_regex_within_the_bounds_reads_quickly(regex: str) -> None:
    assert regex_too_large(regex) is None
    started = time.perf_counter()
    command_regex(regex)
    argument_prefix('"command":"' + regex)
    assert time.perf_counter() - started < 0.5
