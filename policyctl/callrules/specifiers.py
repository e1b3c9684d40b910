"""Entries -> compiled rules: `tool(specifier)` parsed once, for the tool's argument kind.

`tool(*)` matches every call. `name(key=glob, ...)` is accepted for every tool, except on the
argument that the tool's kind already reads (`exec(command=git *)` would match the raw text,
so `git *; rm -rf /` would pass; the shell form decides every command instead).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..names import fold
from .keyed import looks_keyed, parse_keyed
from .model import (
    ArgumentKind,
    ArgumentSpec,
    Effect,
    Matcher,
    Rule,
    SpecifierError,
    SpecifierProblem,
)
from .paths import parse_path_pattern
from .shell_pattern import parse_shell_pattern
from .urls import parse_url_pattern
from .wordglob import STAR, WordPattern

if TYPE_CHECKING:
    from .values import Part


@dataclass(frozen=True, slots=True)
class AnyCall(Matcher):
    """`tool(*)`: every call, also one that cannot be analysed (for deny and ask)."""

    judges_unanalysable = True

    def matches(self, part: Part, strict: bool) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class ShellMatcher(Matcher):
    text: str
    pattern: WordPattern
    first_word: str | None = field(init=False, default=None)
    #: what deny and ask rules match: a `*` glued to the last word (`rm*`, `git push*`) also
    #: takes further words, as in Claude Code (`ls*` meets `ls -la`); allow rules keep the
    #: in-word reading, so the wider reading only ever narrows
    loose: WordPattern = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        items = self.pattern.items
        first = items[0]
        object.__setattr__(self, "first_word", None if first is None else first.literal)
        last = items[-1]
        glued = last is not None and len(last.parts) > 1 and last.parts[-1] == ""
        object.__setattr__(self, "loose", WordPattern((*items, STAR)) if glued else self.pattern)

    def matches(self, part: Part, strict: bool) -> bool:
        words = part.words
        if words is None:
            return False
        if self.first_word is not None and words[0] != self.first_word:
            return False  # the common case, decided without the scan
        if strict:
            return self.pattern.must_match(words, part.open_tail)
        return self.loose.may_match(words, part.open_tail)


def has_specifier(entry: str) -> bool:
    return entry.rstrip().endswith(")") and "(" in entry


def split_entry(entry: str) -> tuple[str, str | None, int]:
    """`exec(git *)` -> ("exec", "git *", 5): the tool, the specifier and where it starts."""
    opening = entry.find("(")
    if opening < 0:
        if ")" in entry:
            raise SpecifierError(
                SpecifierProblem("PC350", '")" without "("', entry, entry.find(")"))
            )
        return fold(entry), None, -1
    stripped = entry.rstrip()
    if not stripped.endswith(")"):
        raise SpecifierError(
            SpecifierProblem(
                "PC350", 'a specifier must end with ")"', entry, len(stripped), 'add ")"'
            )
        )
    tool = fold(entry[:opening])
    if not tool:
        raise SpecifierError(SpecifierProblem("PC350", "a specifier needs a tool name", entry, 0))
    return tool, stripped[opening + 1 : -1], opening + 1


def compile_matcher(entry: str, spec: ArgumentSpec) -> Matcher:
    tool, inner, offset = split_entry(entry)
    if inner is None:
        raise SpecifierError(SpecifierProblem("PC350", "the entry has no specifier", entry, 0))
    if inner.strip() == "*":
        return AnyCall()
    if spec.kind is ArgumentKind.SHELL and looks_keyed(inner):
        key, _, rest = inner.partition("=")
        value = rest.split(",", 1)[0].strip()
        if key.strip() != spec.key and " " in value and not value.startswith('"'):
            raise SpecifierError(
                SpecifierProblem(
                    "PC351",
                    "commands are matched after their VAR=value assignments are stripped, "
                    "so this never matches",
                    entry,
                    offset,
                    f'write {tool}({value.split(" ", 1)[1]}) (or key="..." for an argument)',
                )
            )
    if looks_keyed(inner) and not (spec.kind is ArgumentKind.PATH and "/" in inner.split("=")[0]):
        matcher = parse_keyed(inner, entry, offset)
        if spec.key is not None and spec.kind is not ArgumentKind.KEYED:
            for key in matcher.keys:
                if key == spec.key or key.startswith(spec.key + "."):
                    raise SpecifierError(
                        SpecifierProblem(
                            "PC355",
                            f"{tool}({key}=...) matches the raw text of the argument that "
                            f"{tool}'s {spec.kind.value} rules read",
                            entry,
                            offset + inner.find(key),
                            f"write {tool}(PATTERN) instead",
                        )
                    )
        return matcher
    if spec.kind is ArgumentKind.SHELL:
        return ShellMatcher(inner.strip(), parse_shell_pattern(inner, entry, offset))
    if spec.kind in (ArgumentKind.PATH, ArgumentKind.PATCH):
        return parse_path_pattern(inner, entry, offset)
    if spec.kind is ArgumentKind.URL:
        return parse_url_pattern(inner, entry, offset)
    raise SpecifierError(
        SpecifierProblem(
            "PC354",
            f"{tool} has no argument kind in the catalog: it takes only name(key=glob, ...)",
            entry,
            offset,
            f"write {tool}(key=glob), naming one of its arguments",
        )
    )


def compile_rule(entry: str, effect: Effect, spec: ArgumentSpec, source: object = None) -> Rule:
    tool, _, _ = split_entry(entry)
    return Rule(effect, tool, entry, compile_matcher(entry, spec), source)
