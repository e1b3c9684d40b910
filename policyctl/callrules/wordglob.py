"""Globs over one word and over a sequence of words, matched without backtracking.

A word glob has `*` only (a quoted `*` in a specifier is a literal asterisk, so the glob is kept
as its literal parts rather than as a string with stars). A word pattern is a sequence of word
globs and bare `*` items, each of which matches any run of words, zero or more.

The subject may hold unknown words (`None`: an expansion such as `$X`, an unquoted glob, a
substituted `{}`), and may have an open tail (xargs appends words from its input). Two
questions are asked of it:

- `may_match` (deny and ask rules): could some value of the unknown words match? An unknown
  word may stand for any run of words, so it can swallow any run of pattern items.
- `must_match` (allow rules): does every value match? An unknown word must then be absorbed
  by a bare `*`; no literal pattern word ever matches it.

Both are one pass over the subject keeping the set of reachable pattern positions as a bit
mask: O(words x pattern items), linear in the command for a given pattern.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class WordGlob:
    """`parts` are the literal texts between stars: `("--output=", "")` is `--output=*`."""

    parts: tuple[str, ...]
    #: the word itself when the glob has no star (compared with ==)
    literal: str | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "literal", self.parts[0] if len(self.parts) == 1 else None)

    def matches(self, word: str) -> bool:
        parts = self.parts
        if len(parts) == 1:
            return word == parts[0]
        head, tail = parts[0], parts[-1]
        if len(word) < len(head) + len(tail):
            return False
        if not word.startswith(head) or not word.endswith(tail):
            return False
        pos, end = len(head), len(word) - len(tail)
        for part in parts[1:-1]:
            if not part:
                continue
            found = word.find(part, pos, end)
            if found < 0:
                return False
            pos = found + len(part)
        return True

    def render(self) -> str:
        return "*".join(self.parts)


#: a bare `*` item of a word pattern
STAR = None

PatternItem = WordGlob | None


@dataclass(frozen=True, slots=True)
class WordPattern:
    items: tuple[PatternItem, ...]
    star_mask: int = field(init=False, repr=False, compare=False)
    star_positions: tuple[int, ...] = field(init=False, repr=False, compare=False)

    #: `git log *` and `git log`: word globs with at most one star, at the end
    simple: bool = field(init=False, repr=False, compare=False)
    #: the literal words the pattern starts with (`git push` of `git push * --force`)
    prefix: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        positions = tuple(i for i, item in enumerate(self.items) if item is STAR)
        object.__setattr__(self, "star_positions", positions)
        object.__setattr__(self, "star_mask", sum(1 << i for i in positions))
        simple = not positions or positions == (len(self.items) - 1,)
        object.__setattr__(self, "simple", simple)
        prefix: list[str] = []
        for item in self.items:
            if item is STAR or item.literal is None:
                break
            prefix.append(item.literal)
        object.__setattr__(self, "prefix", tuple(prefix))

    def _prefix_differs(self, words: Sequence[str | None]) -> bool:
        """A known word that differs from the literal at its place, with only known words
        before it: no run of the pattern can reach past it, whatever follows."""
        for i, literal in enumerate(self.prefix):
            if i >= len(words) or words[i] is None:
                return False
            if words[i] != literal:
                return True
        return False

    def _simple(self, words: Sequence[str | None], open_tail: bool) -> bool | None:
        """The common shapes on fully known words, in one comparison per pattern word;
        None when the general scan is needed (an unknown word among the compared ones)."""
        items = self.items
        trailing_star = bool(self.star_positions)
        fixed = len(items) - 1 if trailing_star else len(items)
        if len(words) < fixed or (not trailing_star and (len(words) > fixed or open_tail)):
            # an open tail (xargs) may add the missing words, or none: the scan decides
            return None if open_tail or None in words else False
        for i in range(fixed):
            word = words[i]
            item = items[i]
            if word is None or item is None:
                return None
            if item.literal is not None:
                if word != item.literal:
                    return False
            elif not item.matches(word):
                return False
        return True

    def _close(self, reach: int) -> int:
        """Add the positions reachable by letting bare stars match nothing (chains included)."""
        for j in self.star_positions:
            if reach >> j & 1:
                reach |= 1 << (j + 1)
        return reach

    def _run(self, words: Sequence[str | None], open_tail: bool, strict: bool) -> bool:
        items = self.items
        m = len(items)
        stars = self.star_mask
        full = (1 << (m + 1)) - 1
        reach = self._close(1)
        subject: Sequence[str | None] = [*words, None] if open_tail else words
        for word in subject:
            if not reach:
                return False
            if word is None:
                if strict:
                    nxt = reach & stars
                else:  # an unknown word may stand for any run of pattern items
                    lowest = (reach & -reach).bit_length() - 1
                    nxt = full & ~((1 << lowest) - 1)
                reach = self._close(nxt)
                continue
            nxt = reach & stars
            j, bits = 0, reach
            while bits:
                if bits & 1 and j < m:
                    item = items[j]
                    if item is not STAR and item.matches(word):
                        nxt |= 1 << (j + 1)
                bits >>= 1
                j += 1
            reach = self._close(nxt)
        return bool(reach >> m & 1)

    def may_match(self, words: Sequence[str | None], open_tail: bool = False) -> bool:
        return self._match(words, open_tail, strict=False)

    def must_match(self, words: Sequence[str | None], open_tail: bool = False) -> bool:
        return self._match(words, open_tail, strict=True)

    def _match(self, words: Sequence[str | None], open_tail: bool, strict: bool) -> bool:
        """The shortcuts first (a simple pattern, a literal prefix that differs), then the
        full run; `strict` only matters there, where an unknown word may or must match."""
        if self.simple:
            quick = self._simple(words, open_tail)
            if quick is not None:
                return quick
        elif self._prefix_differs(words):
            return False
        return self._run(words, open_tail, strict=strict)

    def render(self) -> str:
        return " ".join("*" if item is STAR else item.render() for item in self.items)
