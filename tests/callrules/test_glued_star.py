"""Red-team finding 6: `exec(git push*)` / `exec(rm*)` never met `git push origin main`.

A `*` glued to the last word of a shell pattern also takes further words in deny and ask
rules (Claude Code's reading: `ls*` meets `ls -la`); allow rules keep the in-word reading, so
the wider reading only narrows.
"""

from __future__ import annotations

from typing import Any

import pytest

from policyctl import RunContext, load_policy, resolve


def _resolved(tmp_path_factory: pytest.TempPathFactory, tools: str) -> Any:
    path = tmp_path_factory.mktemp("glued") / "p.yaml"
    path.write_text(f"tools:\n{tools}")
    return resolve(load_policy(str(path)), RunContext(provider="openai", workspace="/tmp"))


def _label(resolved: Any, command: str) -> str:
    return str(resolved.decide_call("exec", {"command": command}).verdict.effect.label)


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("git push*", "git push origin main"),
        ("git push*", "git push --force"),
        ("git push*", "git pushx"),
        ("git push*", "git push"),
        ("rm*", "rm -rf /"),
        ("rm*", "rmdir x"),
        ("rm*", "ls; rm -rf /"),
        ("git push -f*", "git push -fq origin"),
    ],
)
@pytest.mark.parametrize("effect", ["deny", "ask"])
def test_glued_star_takes_further_words(
    tmp_path_factory: pytest.TempPathFactory, rule: str, command: str, effect: str
) -> None:
    resolved = _resolved(tmp_path_factory, f'  {effect}: ["exec({rule})"]\n  allow: [exec]\n')
    assert _label(resolved, command) == effect


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("rm '*'", "rm -rf /"),  # a quoted star is a literal asterisk
        ("git push*", "git status"),
        ("git push*", "git pul push"),
        ("rm *.tmp", "rm x.tmp y.txt"),  # the star is not at the end of the last word
    ],
)
def test_other_patterns_unchanged(
    tmp_path_factory: pytest.TempPathFactory, rule: str, command: str
) -> None:
    resolved = _resolved(tmp_path_factory, f'  deny: ["exec({rule})"]\n  allow: [exec]\n')
    assert _label(resolved, command) == "allow"


def test_allow_keeps_in_word_reading(tmp_path_factory: pytest.TempPathFactory) -> None:
    resolved = _resolved(tmp_path_factory, '  allow: ["exec(ls*)"]\n')
    assert _label(resolved, "lsblk") == "allow"
    assert _label(resolved, "ls -la") != "allow"
