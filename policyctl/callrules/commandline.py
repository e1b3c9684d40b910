"""A command's words read with its catalog model (`catalog/commands.py`): options, operands,
the subcommand and the payload, in one pass over the words.

`scan` knows only option syntax: a short option's value is the rest of its word or the next
word (bash: the next word, also inside a cluster: `bash -co errexit SCRIPT`), a long option's
is after `=` or the next word, an `optional` option's only when attached; clustered flags
(`-rf`) are read letter by letter; a long option that is a unique prefix of a listed one is
that option (`--upload-pa`), as GNU getopt_long and git read it. An option the model does
not list makes the line
unanalysable unless the model says its other options are flags: policyctl does not guess
where the payload starts.
"""

from __future__ import annotations

from typing import NamedTuple

from ..catalog.commands import CommandSpec

Words = tuple[str | None, ...]


class Option(NamedTuple):
    name: str
    value: str | None
    #: the words a `find -exec` option runs (up to `;` or `+`)
    argv: Words | None = None
    has_value: bool = False


class Scan(NamedTuple):
    options: list[Option]
    #: indexes of the operands, in order
    operands: list[int]
    #: where the payload starts (the first operand after `skip_operands`, or after `--`)
    payload: int | None
    problem: str | None
    #: the index just after a `--` that ended the options (None: no such `--`)
    after_dashes: int | None = None
    #: every word from this index on is an operand too (not listed: a payload can be long)
    rest: int | None = None


def _is_option(spec: CommandSpec, w: str) -> bool:
    if len(w) < 2:
        return w == "-" and "-" in spec.flags
    return w[0] == "-" or (spec.plus_options and w[0] == "+")


def scan(spec: CommandSpec, words: Words, start: int) -> Scan:
    """Read the options and operands of `words[start:]` (the words after the command name)."""
    n = len(words)
    if start < n and _plain_operand(words[start]):
        if spec.options_end == "first_operand" and spec.skip_operands == 0:
            # the common case (`git status`, `sudo rm x`): the first word is the payload
            return Scan([], [], start, None, None, start)
        if all(map(_plain_operand, words[start:])):
            return Scan(
                [],
                list(range(start, n)),
                start + spec.skip_operands if n - start > spec.skip_operands else None,
                None,
            )
    return _scan(spec, words, start)


def _listed(spec: CommandSpec, key: str) -> bool:
    return (
        key in spec.flags
        or key in spec.valued
        or key in spec.runs
        or key in spec.optional
        or key in spec.unanalysable
    )


def _abbreviated(spec: CommandSpec, key: str) -> str | None:
    """The listed long option `key` is a prefix of: `key` itself when none is (an option the
    model does not list), None when several are (ambiguous: the program refuses it, or picks
    one policyctl cannot know)."""
    found = {
        name
        for group in (spec.flags, spec.valued, spec.runs, spec.optional, spec.unanalysable)
        for name in group
        if name.startswith(key)
    }
    if not found:
        return key
    return found.pop() if len(found) == 1 else None


def _plain_operand(word: str | None) -> bool:
    """A known word that is no option under any model (`+x` is one for the shells)."""
    return word is not None and word[:1] not in ("-", "+")


def _scan(spec: CommandSpec, words: Words, start: int) -> Scan:
    options: list[Option] = []
    operands: list[int] = []
    n = len(words)
    i = start
    ended = False
    after_dashes: int | None = None
    posix = spec.options_end == "first_operand"
    runs = spec.runs
    name = spec.name
    while i < n:
        w = words[i]
        if ended or w is None or not _is_option(spec, w):
            if w is None and not ended and posix and len(operands) <= spec.skip_operands:
                could_be_option = spec.payload != "none" or spec.other_options != "flag"
                if could_be_option and spec.payload != "shell-script":
                    return Scan(options, operands, None, f"{name}: an option that is an expansion")
            operands.append(i)
            i += 1
            if posix and not ended and len(operands) > spec.skip_operands:
                # the payload (or the first operand): every later word is an operand
                return Scan(options, operands, i - 1, None, after_dashes, i)
            # after a skipped operand (`timeout 5`) options end unless the command reads on
            ended = ended or (posix and not spec.options_after_skip)
            continue
        if w == "--":
            ended = True
            after_dashes = i + 1
            i += 1
            continue
        if spec.numeric_options and w[1:].isdigit():
            options.append(Option(w, None))
            i += 1
            continue
        if w[:2] == "--" or w in spec.flags or w in spec.valued or w in runs:
            key, eq, attached = w.partition("=")
            if key[:2] == "--" and len(key) > 2 and not _listed(spec, key):
                # GNU getopt_long and git accept a unique prefix of a long option
                # (`--upload-pa` is `--upload-pack`): read it as the option it abbreviates
                meant = _abbreviated(spec, key)
                if meant is None:
                    return Scan(
                        options, operands, None, f"{name}: {key} abbreviates several options"
                    )
                key = meant
            if key in runs and runs[key] == "argv-until-semicolon":
                j = i + 1
                while j < n and words[j] not in (";", "+"):
                    j += 1
                if j >= n:
                    return Scan(options, operands, None, f"{name} {key} without a closing ; or +")
                options.append(Option(key, None, words[i + 1 : j], True))
                i = j + 1
                continue
            if key in spec.valued or (key in runs and key not in spec.flags):
                if eq:
                    options.append(Option(key, attached, None, True))
                    i += 1
                else:
                    value = words[i + 1] if i + 1 < n else None
                    options.append(Option(key, value, None, True))
                    i += 2
                continue
            if key in spec.optional:
                options.append(Option(key, attached if eq else None, None, bool(eq)))
            elif key in spec.flags and not eq:
                options.append(Option(key, None))
            elif key in spec.unanalysable or spec.other_options == "flag":
                options.append(Option(key, attached if eq else None, None, bool(eq)))
            else:
                return Scan(
                    options, operands, None, f"{name}: option {w} is not known to policyctl"
                )
            i += 1
            continue
        # a cluster of short options: `-rf`, `-n10`, `-co NAME`
        taken = 0  # next words taken as values (bash style)
        letters = w[1:]
        for k, letter in enumerate(letters):
            key = w[0] + letter
            rest = letters[k + 1 :]
            if key in spec.valued or key in runs:
                if rest and spec.cluster_values == "rest":
                    options.append(Option(key, rest, None, True))
                    break
                taken += 1
                value = words[i + taken] if i + taken < n else None
                options.append(Option(key, value, None, True))
                if spec.cluster_values == "rest":
                    break
            elif key in spec.optional:
                options.append(Option(key, rest or None, None, bool(rest)))
                break
            elif key in spec.flags or key in spec.unanalysable or spec.other_options == "flag":
                options.append(Option(key, None))
            else:
                return Scan(
                    options, operands, None, f"{name}: option {w} is not known to policyctl"
                )
        i += 1 + taken
    payload = None
    if len(operands) > spec.skip_operands:
        payload = operands[spec.skip_operands]
    return Scan(options, operands, payload, None, after_dashes)
