"""What `validate` can decide about call rules without running a call: dead and shadowed rules.

Two questions, each answered only where the answer is certain (a check that guesses would
report rules that work):

- `never_matching(rule)`: a shell pattern whose command word the analysis never leaves in
  place. Shells (`sh -c '...'` is decided by the script's commands; `sh FILE` cannot be
  analysed), `eval`, `source` and `.` (cannot be analysed), bash's reserved words (never a
  command), and wrappers (`timeout`, `nice`, `nohup`, `env`, `command`, `time`) followed by
  more words: the wrapper is stripped, so `exec(nohup *)` never meets `nohup rm x`, which is
  matched as `rm x`. A command word written as a glob counts when its last `/` follows its
  last star (`exec(*/sh *)`: every word it matches runs `sh`).
- `covers(broad, narrow)`: every call `narrow` admits as an allow also meets `broad` as a deny
  or ask (so the allow never decides a call at its layer). Decided for `tool(*)`, equal
  specifiers, shell word patterns (the broad pattern must match every instance of the narrow
  one), paths under a denied directory of the same anchor, domains and subdomains, IP
  networks, and `key=glob` conditions; anything else is "not shown" and not reported.

Not decidable from the policy and left out: keys a tool's arguments do not have, unless the
declared inventory gives the tool's parameters (PC441, `call_checks`; otherwise argument
schemas live in the runtime registry, not in the catalog), and paths outside the roots a run
could reach (the workspace and home are the run's, not the policy's).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..callrules.commands import RESERVED, UNANALYSABLE, is_bash_like
from ..callrules.keyed import KeyedMatcher
from ..callrules.model import Matcher, Rule
from ..callrules.paths import PathPattern
from ..callrules.specifiers import AnyCall, ShellMatcher
from ..callrules.urls import DomainPattern, HostPattern, IpPattern, UrlGlob
from ..callrules.wordglob import STAR, PatternItem
from ..callrules.wrappers import basename
from ..catalog.commands import CommandCatalog, builtin_commands

_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class NeverMatches:
    """Why a rule can never match, and what to write instead."""

    reason: str
    fix: str


def never_matching(rule: Rule) -> NeverMatches | None:
    matcher = rule.matcher
    if not isinstance(matcher, ShellMatcher):
        return None
    items = matcher.pattern.items
    first = items[0]
    if first is STAR:
        return None
    word = first.literal
    name = basename(word) if word is not None else _fixed_basename(first.parts)
    if name is None:
        return None
    tool = rule.tool
    if is_bash_like(name):
        return NeverMatches(
            f"{name} is never matched as a command: `{name} -c 'SCRIPT'` is decided by the "
            f"commands of its script, and `{name}` reading a file or its input cannot be "
            "analysed (it gets the scope's callDefault)",
            f"write rules for the commands the scripts run, or {tool}(*) to refuse every call",
        )
    if name in UNANALYSABLE:
        return NeverMatches(
            f"{name} is never matched as a command: {UNANALYSABLE[name]}, so the line cannot "
            "be analysed and gets the scope's callDefault",
            f"deny {tool}(*) or set callDefault: deny where {name} must not run",
        )
    if word is not None and word in RESERVED:
        return NeverMatches(
            f'"{word}" is a reserved word of bash, never the name of a command: the commands '
            "inside the compound command are decided one by one",
            f"write rules for the commands inside it, e.g. {tool}(rm *)",
        )
    spec = builtin_commands().get(name)
    wrapper = spec is not None and spec.transparent and spec.payload == "command"
    if wrapper and len(items) > 1:
        rest = " ".join("*" if item is STAR else item.render() for item in items[1:])
        wrapped = _after_wrapper_options(items[1:])
        suggestion = f"{tool}({wrapped})" if wrapped else f"{tool}(CMD *) for the command it runs"
        return NeverMatches(
            f"the wrapper {name} is stripped before a command is matched (`{name} {rest}` is "
            f"matched as what {name} runs), so this only ever matches {name} running nothing",
            f"write {suggestion}: the rule then applies with or without {name}",
        )
    return None


def _fixed_basename(parts: tuple[str, ...]) -> str | None:
    """The command name every word a glob matches ends in, when its last `/` comes after its
    last star: `*/sh` and `/usr/*/bin/bash` name only `sh` and `bash`, which the analysis
    never leaves in place as the command (a glob ending in a star names any command)."""
    tail = parts[-1]
    slash = tail.rfind("/")
    return tail[slash + 1 :] or None if slash >= 0 else None


def unmodelled_subcommand(rule: Rule, catalog: CommandCatalog) -> str | None:
    """The subcommand a shell specifier names after a command the catalog does not model
    (`exec(cargo publish *)` -> "publish"): global options could hide it (PC490)."""
    matcher = rule.matcher
    if not isinstance(matcher, ShellMatcher):
        return None
    items = matcher.pattern.items
    if len(items) < 2 or items[0] is STAR or items[1] is STAR:
        return None
    first, second = items[0].literal, items[1].literal
    if first is None or second is None or second[:1] in ("-", "+", "") or "=" in second:
        return None
    if catalog.get(basename(first)) is not None:
        return None
    return second


def _after_wrapper_options(items: tuple[PatternItem, ...]) -> str | None:
    """`nohup rm *` -> `rm *`; None when the wrapped command is not written literally."""
    words = ["*" if item is None else item.render() for item in items]
    while words and (words[0].startswith("-") or words[0][:1].isdigit() or "=" in words[0]):
        words = words[1:]
    if not words or words[0] == "*" or "*" in words[0]:
        return None
    return " ".join(words)


def covers(broad: Matcher, narrow: Matcher) -> bool:
    """Whether every call `narrow` admits (as an allow) is met by `broad` (as a deny or ask)."""
    if isinstance(broad, AnyCall):
        return True
    if isinstance(narrow, AnyCall):
        return False
    if isinstance(broad, ShellMatcher) and isinstance(narrow, ShellMatcher):
        # the narrow pattern's words, its stars and globs as unknown words: the broad pattern
        # must match whatever they stand for (an unknown word only a bare `*` absorbs)
        words = tuple(
            None if item is STAR or item.literal is None else item.literal
            for item in narrow.pattern.items
        )
        return broad.pattern.must_match(words)
    if isinstance(broad, PathPattern) and isinstance(narrow, PathPattern):
        return _path_covers(broad, narrow)
    if isinstance(broad, DomainPattern) and isinstance(narrow, (DomainPattern, UrlGlob)):
        return _host_covers(broad.host, narrow.host)
    if isinstance(broad, IpPattern) and isinstance(narrow, IpPattern):
        b, n = broad.network, narrow.network
        return b.version == n.version and n.subnet_of(b)  # type: ignore[arg-type]
    if isinstance(broad, KeyedMatcher) and isinstance(narrow, KeyedMatcher):
        return _keyed_covers(broad, narrow)
    return False


def _literal_rest(pattern: PathPattern) -> str | None:
    """The pattern's path below its anchor when it has no glob characters ("" for the anchor)."""
    text = pattern.text
    if pattern.anchor == "home":
        rest = text[2:]
    elif pattern.anchor == "root":
        rest = text[1:]
    elif pattern.anchor == "workspace":
        rest = text[2:] if text == "." or text.startswith("./") else text
    else:
        rest = text
    rest = rest.strip("/")
    if any(ch in _GLOB_CHARS or ch == "\\" for ch in rest):
        return None
    return rest


def _path_covers(broad: PathPattern, narrow: PathPattern) -> bool:
    """A deny on a directory (or a file) meets everything at or under it: an anchored literal
    path covers every pattern of the same anchor that starts with it (`./secrets` covers
    `./secrets/**` and `./secrets/key`); the anchor itself (`./`) covers the whole anchor."""
    if broad.text == narrow.text:
        return True
    if broad.anchor != narrow.anchor or broad.anchor == "anywhere":
        return False
    base = _literal_rest(broad)
    if base is None:
        return False
    if base == "":
        return True
    rest = narrow.text
    if narrow.anchor == "home":
        rest = rest[2:]
    elif narrow.anchor == "root":
        rest = rest[1:]
    elif rest.startswith("./"):
        rest = rest[2:]
    rest = rest.lstrip("/")
    return rest == base or rest.rstrip("/") == base or rest.startswith(base + "/")


def _host_covers(broad: HostPattern, narrow: HostPattern) -> bool:
    if not broad.subdomains:
        return not narrow.subdomains and narrow.base == broad.base
    return narrow.base.endswith("." + broad.base) or (
        narrow.subdomains and narrow.base == broad.base
    )


def _keyed_covers(broad: KeyedMatcher, narrow: KeyedMatcher) -> bool:
    """Every condition of `broad` is implied by one of `narrow`'s on the same key: `broad`
    says `*` (any value of a key that is present, which `narrow` requires), or the narrow
    value is literal and the broad glob (case-folded, as deny and ask compare) matches it."""
    by_key = {c.path: c for c in narrow.conditions}
    for cond in broad.conditions:
        mine = by_key.get(cond.path)
        if mine is None:
            return False
        if cond.exact.pattern == "*":
            continue
        if "*" in mine.exact.pattern or not cond.folded.matches(mine.exact.pattern.casefold()):
            return False
    return True
