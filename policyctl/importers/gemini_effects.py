"""The Gemini CLI rules whose effect changes on import (PC126).

Gemini CLI: the highest-priority matching rule decides. policyctl: the most restrictive
matching entry decides (deny > ask > allow), whatever the order. So wherever a rule H and a
rule L can match the same call, H has the higher priority (or the same: Gemini CLI's order
then decided) and H is less restrictive than L, that call used to get H's decision and now
gets L's. Each such pair is reported once, at H, naming L's location too.

Two rules can match the same call when their tools overlap (equal, or a glob of one matches
the other) and their command patterns can match the same words (`git *` and `git push *`
can, `git status *` and `npm *` cannot); a rule without a command pattern matches every call.
Rules are bucketed by tool and by a pattern's first literal word, so a file of many unrelated
rules costs little; past a budget of comparisons the analysis stops and says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..callrules.shell_pattern import parse_shell_pattern
from ..callrules.wordglob import PatternItem, WordGlob
from ..diagnostics import Diagnostic
from ..names import Glob
from .calls import finding

RANK = {"allow": 0, "ask": 1, "deny": 2}
MAX_COMPARISONS = 2_000_000
MAX_REPORTED = 500
#: pattern pairs larger than this (positions x positions) are assumed to overlap
MAX_STATES = 100_000

Items = tuple[PatternItem, ...] | None  # None: every call
Item = tuple[int, str, Items, str]  # rule number, tool, pattern, entry


def _pattern(entry: str) -> tuple[str, Items]:
    if "(" not in entry:
        return entry, None
    tool, _, inner = entry.partition("(")
    inner = inner[:-1]
    if inner.strip() == "*":
        return tool, None
    try:
        return tool, parse_shell_pattern(inner, entry, len(tool) + 1).items
    except Exception:  # not a shell pattern: may overlap with anything
        return tool, None


def _tools_overlap(a: str, b: str) -> bool:
    if a == b or "*" in (a, b):
        return True
    if "bundle-mcp" in (a, b):
        other = b if a == "bundle-mcp" else a
        return "__" in other
    if "*" in a and "*" in b:
        return True
    if "*" in a:
        return Glob.compile(a).matches(b)
    if "*" in b:
        return Glob.compile(b).matches(a)
    return False


def _words_overlap(a: WordGlob, b: WordGlob) -> bool:
    if a.literal is not None and b.literal is not None:
        return a.literal == b.literal
    if a.literal is not None:
        return b.matches(a.literal)
    if b.literal is not None:
        return a.matches(b.literal)
    return True  # two globs: assume some word matches both


def patterns_overlap(p: Items, q: Items) -> bool:
    """Whether some command's words match both patterns (None matches everything).

    A search over positions (i in p, j in q): a star may match nothing (skip it) or take one
    word the other pattern matches; two word globs must admit a common word."""
    if p is None or q is None:
        return True
    if len(p) * len(q) > MAX_STATES:
        return True  # too large to decide here: assume they overlap (reported, not missed)
    todo, seen = [(0, 0)], {(0, 0)}
    while todo:
        i, j = todo.pop()
        if i == len(p) and j == len(q):
            return True
        a = p[i] if i < len(p) else False
        b = q[j] if j < len(q) else False
        steps = []
        if a is None:
            steps.append((i + 1, j))
            if b is not False:
                steps.append((i, j + 1))  # p's star takes q's word (or q's star's word)
        if b is None:
            steps.append((i, j + 1))
            if a is not False:
                steps.append((i + 1, j))
        if isinstance(a, WordGlob) and isinstance(b, WordGlob) and _words_overlap(a, b):
            steps.append((i + 1, j + 1))
        for step in steps:
            if step not in seen:
                seen.add(step)
                todo.append(step)
    return False


def _first_word(items: Items) -> str | None:
    if not items or items[0] is None:
        return None
    return items[0].literal


def changed_effects(rules: Sequence[Any], catalog: Any) -> list[Diagnostic]:
    """`rules`: `gemini.GeminiRule`s (index, source, effect, priority, entries)."""
    items: list[Item] = []
    for n, rule in enumerate(rules):
        for entry in rule.entries:
            tool, pattern = _pattern(entry)
            items.append((n, tool, pattern, entry))
    buckets: dict[tuple[str, str | None], list[Item]] = {}
    globbed: list[Item] = []
    for item in items:
        if "*" in item[1] or item[1] == "bundle-mcp":
            globbed.append(item)
        else:
            buckets.setdefault((item[1], _first_word(item[2])), []).append(item)
    by_tool: dict[str, list[Item]] = {}
    for (tool, _), bucket in buckets.items():
        by_tool.setdefault(tool, []).extend(bucket)
    seen: set[tuple[int, int]] = set()
    out: list[Diagnostic] = []
    budget = MAX_COMPARISONS

    def candidates(item: Item) -> list[Item]:
        tool, word = item[1], _first_word(item[2])
        if "*" in tool or tool == "bundle-mcp":
            return items
        if word is None:
            return by_tool.get(tool, []) + globbed
        return buckets.get((tool, word), []) + buckets.get((tool, None), []) + globbed

    for item in items:
        for other in candidates(item):
            budget -= 1
            if budget < 0:
                out.append(
                    finding(
                        "PC126",
                        f"the priority analysis stopped after {MAX_COMPARISONS} comparisons: "
                        "further rules whose effect changes are not listed",
                        rules[item[0]].source,
                    )
                )
                return out
            h, low = rules[item[0]], rules[other[0]]
            if item[0] == other[0] or (item[0], other[0]) in seen:
                continue
            if RANK[h.effect] >= RANK[low.effect] or h.priority < low.priority:
                continue
            if not (_tools_overlap(item[1], other[1]) and patterns_overlap(item[2], other[2])):
                continue
            seen.add((item[0], other[0]))
            out.append(_report(h, low, item, other))
            if len(out) >= MAX_REPORTED:
                out.append(
                    finding(
                        "PC126",
                        f"more than {MAX_REPORTED} rules change effect: the rest are not listed",
                        h.source,
                    )
                )
                return out
    return out


def _report(h: Any, low: Any, item: Item, other: Item) -> Diagnostic:
    order = (
        "the higher priority"
        if h.priority > low.priority
        else "the same priority, and Gemini CLI's rule order"
    )
    where = f"{low.source}" if low.source else f"rule #{low.index + 1}"
    return finding(
        "PC126",
        f"rule #{h.index + 1} ({h.effect}, priority {h.priority}) used to decide calls that "
        f"rule #{low.index + 1} at {where} ({low.effect}, priority {low.priority}) also "
        f"matches ({item[3]} and {other[3]}), by {order}; after import the "
        f"{low.effect} decides them",
        h.source,
        fix=f"narrow rule #{low.index + 1}, or drop rule #{h.index + 1}, to say which is meant",
    )
