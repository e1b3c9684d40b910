"""Gemini CLI's command prefixes and command regexes -> policyctl shell word patterns.

Gemini CLI tests a rule's regex against the JSON text of the call's arguments, after
`"command":"`: a `commandRegex` (or an `argsPattern` that starts with `"command":"`) matches a
command whose text *starts* with what the regex matches, and `^` or `$` (applied to the whole
JSON text) make it match nothing. `commandPrefix = "git"` matches `git` and `git ...`.

What translates exactly: a regex of literal text, separators (` `, `\\s`, `\\s+`), groups of
literal alternatives (`git (commit|push)`), optionally ending in `.*`. The text is a prefix of
the command's characters, so its last word is a glob: `git (commit|push)` is `git commit* *`
and `git push* *`. Anything else is cut at the first construct that is not literal: for deny
and ask rules the prefix before it is imported (more commands refused or asked: said), for
allow rules nothing (fewer commands admitted: said). A prefix never holds shell operators or
quotes: they are cut there too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: how many alternatives a regex's groups may expand to before it counts as not literal
MAX_ALTERNATIVES = 32
#: the largest regex read at all, in characters, and its deepest nesting of groups: a
#: command prefix is a few words, and these bound the reading's time and recursion (a 5,000
#: deep nesting overflowed Python's stack; 120 KB of `[a-z]*` took 14 s)
MAX_REGEX_LENGTH = 4096
MAX_REGEX_DEPTH = 32
_SHELL_SPECIAL = set(";|&<>()$`'\"\\*?[]{}#~!")
_LITERAL_ESCAPES = set(".-/\\:=,@%+_ ~#!&;<>|(){}[]*?^$'\"")


@dataclass(frozen=True, slots=True)
class Patterns:
    """`words`: one shell pattern per alternative (space-separated words); `exact`: they match
    the same commands as the source; `cut`: the regex part that was not literal (if any)."""

    words: tuple[str, ...]
    exact: bool
    never: bool = False
    cut: str | None = None


_SEP = " "  # a separator atom
_ANY = "\x00any"  # `.*` / `.+`
_OTHER = "\x00other"  # anything else: the cut


def regex_too_large(regex: str) -> str | None:
    """Why `regex` is beyond what the importer reads (its length, or its nesting of groups),
    or None. Checked in one pass before anything else looks at the regex."""
    if len(regex) > MAX_REGEX_LENGTH:
        return f"it is {len(regex)} characters long, more than {MAX_REGEX_LENGTH}"
    depth = deepest = 0
    escaped = False
    for ch in regex:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif ch == ")":
            depth = max(depth - 1, 0)
    if deepest > MAX_REGEX_DEPTH:
        return f"its groups nest {deepest} deep, more than {MAX_REGEX_DEPTH}"
    return None


def _atoms(regex: str) -> list[list[str]] | None:
    """The regex as alternative atom sequences (each atom a literal character, _SEP, _ANY or
    _OTHER); None when it cannot be read (unbalanced). Reading stops at the first _OTHER of
    every sequence: nothing after it is ever used, and this keeps the reading linear.
    Callers bound the regex first (`regex_too_large`): the reading recurses into groups."""
    seqs: list[list[str]] = [[]]
    i, n = 0, len(regex)
    while i < n:
        ch = regex[i]
        nxt = regex[i + 1] if i + 1 < n else ""
        quantified = False
        if ch == "\\" and nxt:
            if nxt == "s":
                atom = _SEP
                if i + 2 < n and regex[i + 2] == "+":
                    i += 1
            elif nxt in _LITERAL_ESCAPES:
                atom = nxt
            else:
                atom = _OTHER
            i += 2
        elif ch == "." and nxt in ("*", "+"):
            atom, i = _ANY, i + 2
        elif ch == " ":
            atom = _SEP
            i += 2 if nxt == "+" else 1
        elif ch == "(":
            depth, j = 1, i + 1
            while j < n and depth:
                if regex[j] == "\\":
                    j += 1
                elif regex[j] == "(":
                    depth += 1
                elif regex[j] == ")":
                    depth -= 1
                j += 1
            if depth:
                return None
            body = regex[i + 1 : j - 1]
            if body.startswith("?:"):
                body = body[2:]
            inner: list[list[str]] | None = [] if not body.startswith("?") else None
            for alternative in _split_top(body) if inner is not None else ():
                got = _atoms(alternative)
                if got is None or inner is None:
                    inner = None
                    break
                inner.extend(got)
            i = j
            quantified = i < n and regex[i] in "*+?{"
            if inner is None or quantified or any(_OTHER in s or _ANY in s for s in inner):
                return [[*s, _OTHER] for s in seqs]
            if len(seqs) * len(inner) > MAX_ALTERNATIVES:
                return [[*s, _OTHER] for s in seqs]
            seqs = [[*s, *alt] for s in seqs for alt in inner]
            continue
        elif ch == "|":
            return None  # top-level alternation: handled by the caller
        elif ch in ".[]^$*+?{})":
            atom, i = _OTHER, i + 1
        else:
            atom, i = ch, i + 1
        if i < n and regex[i] in "*+?{" and atom not in (_ANY, _OTHER):
            atom, i = _OTHER, i + 1  # a quantified character: not literal any more
        for s in seqs:  # each sequence is a list of its own: extended in place
            s.append(atom)
        if atom == _OTHER:
            return seqs
    return seqs


def _split_top(regex: str) -> list[str]:
    parts: list[str] = []
    depth, start, i = 0, 0, 0
    while i < len(regex):
        ch = regex[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(regex[start:i])
            start = i + 1
        i += 1
    parts.append(regex[start:])
    return parts


def _prefix_words(text: str, char_prefix: bool, wide: bool = False) -> str:
    """A command-text prefix -> a word pattern. `char_prefix`: the last word may continue
    (a regex prefix); else the prefix ends at a word boundary (commandPrefix). `wide`: an
    approximation that may match more (the bare command too)."""
    words = [w for w in text.replace("\t", " ").split(" ") if w]
    if not words:
        return "*"
    if char_prefix and not text.endswith(" "):
        words[-1] += "*"
    elif char_prefix and not wide:
        return " ".join(words) + " ** *"  # at least one more word follows the space
    return " ".join([*words, "*"])


def _safe_prefix(text: str) -> tuple[str, bool]:
    """The text up to its first shell-special character, and whether it was cut there."""
    for i, ch in enumerate(text):
        if ch in _SHELL_SPECIAL:
            return text[:i], True
    return text, False


def command_prefix(prefix: str) -> Patterns:
    """`commandPrefix = "..."`: the words, then anything."""
    text, cut = _safe_prefix(prefix)
    if not prefix.strip(" \t"):
        return Patterns((), False, never=False, cut="an empty prefix")
    if cut:
        return Patterns((_prefix_words(text, True, wide=True),), False, cut=prefix[len(text) :])
    return Patterns((_prefix_words(text, False),), True)


def command_regex(regex: str) -> Patterns:
    """`commandRegex = "..."`: see the module docstring."""
    alternatives = _split_top(regex)
    if len(alternatives) > 1:
        # only the first alternative follows `"command":"`; the others match anywhere in the
        # JSON text of the arguments (any part of the command, any other argument)
        return Patterns(("*",), False, cut="|" + "|".join(alternatives[1:]))
    if regex.startswith("^") or (regex.endswith("$") and not regex.endswith("\\$")):
        return Patterns((), True, never=True)
    seqs = _atoms(regex)
    if seqs is None:
        return Patterns(("*",), False, cut=regex)
    out: list[str] = []
    exact, cut_text = True, None
    for seq in seqs:
        k = next((i for i, a in enumerate(seq) if a in (_ANY, _OTHER)), len(seq))
        literal = "".join(" " if a == _SEP else a for a in seq[:k])
        safe, was_cut = _safe_prefix(literal)
        tail_is_any = k == len(seq) - 1 and seq[k] == _ANY
        wide = (k < len(seq) and not tail_is_any) or was_cut
        if wide:
            exact = False
            cut_text = cut_text or regex
        out.append(_prefix_words(safe, True, wide))
    return Patterns(tuple(dict.fromkeys(out)), exact, cut=cut_text)


_ARGUMENT = re.compile(r'"([A-Za-z0-9_][A-Za-z0-9_-]*)":"(.*)\Z', re.S)


def argument_prefix(pattern: str) -> tuple[str, str] | None:
    """`argsPattern = '"repo":"acme/'` -> ("repo", "acme/*"): a top-level argument whose text
    starts with a literal (or, with a closing quote, is exactly it). None when the pattern is
    not of that form. Gemini CLI's pattern also meets the key at any depth of the arguments,
    so as an allow rule this admits fewer calls (said by the caller)."""
    found = _ARGUMENT.match(pattern)
    if found is None:
        return None
    key, rest = found.groups()
    closed = rest.endswith('"') and not rest.endswith('\\"')
    body = rest[:-1] if closed else rest
    if "\\s" in body:
        return None  # any whitespace, not one literal character
    seqs = _atoms(body)
    if seqs is None or len(seqs) != 1:
        return None
    seq = seqs[0]
    if seq and seq[-1] == _ANY and not closed:
        seq = seq[:-1]
    if any(a in (_ANY, _OTHER) for a in seq):
        return None
    text = "".join(" " if a == _SEP else a for a in seq)
    if "*" in text or not text:
        return None
    return key, text if closed else text + "*"
