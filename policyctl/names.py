"""Names: every normal form policyctl compares by, the ASCII rule, `*` globs, MCP tool names.

One module owns each normal form (semantics 2, 3, 7.2, 7.5, 10): identifiers are folded with
`fold` (trim, lowercase), entries and tool names with `normalize` (plus aliases), sender keys
with `sender_key` (a run's sender identity is put in the same form by
`pipeline.context.normalise_sender`, from `sender_value`), provider keys with `provider_key`.
Nothing else writes `.strip().lower()` for these values.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

_ALLOWED = re.compile(r"[a-z0-9_\-.:*@/]+\Z")


def fold(text: str) -> str:
    """The normal form of an identifier (agent, channel, provider, profile): trim, lowercase."""
    return text.strip().lower()


def clean(value: str | None, lower: bool = True) -> str | None:
    """A caller-supplied field: trimmed (and lowercased), None when empty."""
    if value is None:
        return None
    text = value.strip()
    return (text.lower() if lower else text) or None


def normalize(raw: str, aliases: Mapping[str, str]) -> str:
    """Trim, lowercase, then map a whole-string alias (`BASH` -> `exec`; `bash*` stays)."""
    text = raw.strip().lower()
    return aliases.get(text, text)


def ascii_problem(name: str) -> str | None:
    """Why a normalised entry breaks the ASCII rule, or None when it is fine."""
    if _ALLOWED.match(name):
        return None
    for ch in name:
        if not _ALLOWED.match(ch):
            label = unicodedata.name(ch, "") or "control character"
            return f"character U+{ord(ch):04X} {label} is not allowed"
    return "empty entry"  # pragma: no cover - callers drop empty entries first


_ID_ALLOWED = re.compile(r"[\x20-\x7e]*\Z")


def identifier_problem(ident: str) -> str | None:
    """Why a folded scope identifier (agent, channel, account, group, provider) is refused.

    The ASCII decision for entries (semantics 2) applied to the ids that select a scope: a
    look-alike id ("cоder" with a Cyrillic о) is a scope that never applies while the real
    one gets the wider defaults. Any printable ASCII is accepted (group ids carry `@ ! # +`
    and spaces); ASCII-only look-alikes (`l` and `1`) are left to review.
    """
    if _ID_ALLOWED.match(ident):
        return None
    for ch in ident:
        if not _ID_ALLOWED.match(ch):
            label = unicodedata.name(ch, "") or "control character"
            return f"character U+{ord(ch):04X} {label} is not allowed"
    return None  # pragma: no cover - every character matched


def sender_key_problem(norm: str) -> str | None:
    """Why a normalised sender key is refused: the ids of senders (`id:`, `e164:`,
    `username:`, `channel:`) are ASCII on every platform, so a key with a look-alike letter
    (`id:аlice`, Cyrillic а) names nobody while the real sender gets the wider rules. Display
    names (`name:`) may be any script, but not invisible characters (zero-width, bidi
    overrides, controls), which make two keys that read the same differ."""
    if not norm.startswith("name:"):
        return identifier_problem(norm)
    for ch in norm:
        if unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp"):
            label = unicodedata.name(ch, "") or "control character"
            return f"character U+{ord(ch):04X} {label} is not allowed"
    return None


def shown(text: str) -> str:
    """An identifier for a message: non-ASCII and control characters as escapes."""
    return "".join(
        ch if " " <= ch <= "~" else ch.encode("unicode_escape").decode("ascii") for ch in text
    )


def is_glob(entry: str) -> bool:
    return "*" in entry


#: an entry that names a group of tools rather than one tool
GROUP_PREFIX = "group:"


def entry_syntax(name: str, plugin_ids: Iterable[str] = ()) -> str | None:
    """Why a normalised tool name would read as an entry (a pattern or a group), or None.

    A tool named `*`, `ex*`, `group:plugins`, `bundle-mcp` or another plugin's id (pass the
    ids of the other plugins) would match more than itself wherever names are read back as
    entries; such a tool never enters a run.
    """
    if "*" in name:
        return "contains *, which entries read as a wildcard"
    if name.startswith(GROUP_PREFIX):
        return "starts with group:, which entries read as a group"
    if name == "bundle-mcp" or name in plugin_ids:
        return "is a plugin id, which entries read as every tool of that plugin"
    return None


def plugin_id_syntax(plugin_id: str) -> str | None:
    """Why a folded plugin id is reserved entry syntax, or None.

    Entries read `bundle-mcp` as every MCP tool, `group:...` as a group and `*` as a wildcard:
    a plugin claiming such an id would be granted by every entry written for those.
    """
    if plugin_id == "bundle-mcp":
        return "is reserved for MCP tools"
    if plugin_id.startswith(GROUP_PREFIX):
        return "starts with group:, which entries read as a group"
    if "*" in plugin_id:
        return "contains *, which entries read as a wildcard"
    return None


# -- providers (semantics 7.2) ------------------------------------------------------------------


def provider_key(key: str, canonical: Callable[[str], str]) -> str:
    """A `byProvider` key or a run's provider/model: folded, provider alias canonicalised."""
    provider, slash, model = fold(key).partition("/")
    provider = canonical(provider)
    return f"{provider}/{model}" if slash else provider


# -- sender keys (semantics 7.5) ----------------------------------------------------------------

SENDER_KINDS = ("id", "e164", "username", "name", "channel")


@dataclass(frozen=True, slots=True)
class SenderKey:
    """A `toolsBySender` key read by the one grammar: its normal form, or why it is invalid.

    `legacy` marks an untyped key, matched as a sender id only (PC403)."""

    norm: str | None
    problem: str | None = None
    legacy: bool = False


def sender_value(kind: str, value: str) -> str:
    text = fold(value)
    return text.removeprefix("@") if kind == "username" else text


def sender_key(key: str) -> SenderKey:
    text = key.strip()
    if text == "*":
        return SenderKey("*")
    kind, sep, value = text.partition(":")
    kind = kind.lower()
    if sep and kind in SENDER_KINDS:
        if kind == "channel":
            channel, _, sender_id = fold(value).partition(":")
            if not channel or not sender_id.strip():
                return SenderKey(None, "needs channel:<channel>:<id>")
            return SenderKey(f"channel:{channel.strip()}:{sender_id.strip()}")
        norm = sender_value(kind, value)
        if not norm:
            return SenderKey(None, "has an empty value")
        return SenderKey(f"{kind}:{norm}")
    if not text:
        return SenderKey(None, "is empty")
    return SenderKey(f"id:{text.lower()}", legacy=True)


@dataclass(frozen=True, slots=True)
class Glob:
    """A `*`-only glob, anchored at both ends, matched without backtracking.

    The pattern is split at `*` into literal parts. The first part must be a prefix, the last a
    suffix, and the middle parts are found left to right, each at its earliest position. For
    `*`-only globs the leftmost choice is always safe, so matching is one forward scan of the
    name whatever the pattern (`*a*a*a*b` cannot blow up as a backtracking regex would).
    """

    pattern: str
    head: str
    middle: tuple[str, ...]
    tail: str
    min_length: int

    @staticmethod
    def compile(pattern: str) -> Glob:
        parts = pattern.split("*")
        if len(parts) == 1:  # no star: the pattern is the name itself
            return Glob(pattern, pattern, (), "", len(pattern))
        head, tail = parts[0], parts[-1]
        middle = tuple(p for p in parts[1:-1] if p)
        return Glob(pattern, head, middle, tail, len(head) + len(tail) + sum(map(len, middle)))

    def matches(self, name: str) -> bool:
        if len(name) < self.min_length:
            return False
        if not self.tail and not self.middle and self.head == self.pattern:
            return name == self.pattern
        if not name.startswith(self.head) or not name.endswith(self.tail):
            return False
        pos, end = len(self.head), len(name) - len(self.tail)
        for part in self.middle:
            found = name.find(part, pos, end)
            if found < 0:
                return False
            pos = found + len(part)
        return True


class GlobIndex:
    """Many globs as one matcher: which of them (earliest in list order) matches a name.

    Globs are bucketed by their literal head, then their literal tail, then their first
    middle part. A name only visits the buckets of its own prefixes and suffixes of the
    lengths that occur (and, in a bucket with many middle parts, its substrings of the
    lengths that occur), so 200,000 globs cost a few dictionary lookups per name instead of
    200,000 matches, and a long name costs time linear in its length per distinct length.
    Built once, never written afterwards.
    """

    __slots__ = ("_head_lengths", "_heads")

    def __init__(self, globs: Iterable[tuple[int, Glob]]) -> None:
        heads: dict[str, _Tails] = {}
        for order, glob in globs:
            tails = heads.get(glob.head)
            if tails is None:
                tails = heads[glob.head] = _Tails()
            tails.add(order, glob)
        for tails in heads.values():
            tails.freeze()
        self._heads = heads
        self._head_lengths = sorted({len(h) for h in heads})

    def first(self, name: str) -> int | None:
        """The list order of the earliest glob that matches `name`, or None."""
        best: int | None = None
        size = len(name)
        for h in self._head_lengths:
            if h > size:
                break
            tails = self._heads.get(name[:h])
            if tails is not None:
                best = tails.first(name, h, best)
        return best

    def matching(self, name: str) -> Iterator[int]:
        """The list order of every glob that matches `name` (in no particular order)."""
        size = len(name)
        for h in self._head_lengths:
            if h > size:
                break
            tails = self._heads.get(name[:h])
            if tails is not None:
                yield from tails.matching(name, h)


class _Tails:
    __slots__ = ("lengths", "middle_lengths", "middles")

    def __init__(self) -> None:
        self.middles: dict[str, dict[str, list[tuple[int, Glob]]]] = {}
        self.lengths: list[int] = []
        self.middle_lengths: dict[str, list[int]] = {}

    def add(self, order: int, glob: Glob) -> None:
        by_middle = self.middles.setdefault(glob.tail, {})
        by_middle.setdefault(glob.middle[0] if glob.middle else "", []).append((order, glob))

    def freeze(self) -> None:
        for by_middle in self.middles.values():
            for bucket in by_middle.values():
                bucket.sort(key=lambda item: item[0])
        self.lengths = sorted({len(t) for t in self.middles})
        self.middle_lengths = {
            tail: sorted({len(k) for k in by_middle if k})
            for tail, by_middle in self.middles.items()
        }

    def first(self, name: str, head: int, best: int | None) -> int | None:
        size = len(name)
        for t in self.lengths:
            if head + t > size:
                break
            tail = name[size - t :] if t else ""
            by_middle = self.middles.get(tail)
            if by_middle is None:
                continue
            if len(by_middle) <= 8:
                for bucket in by_middle.values():
                    best = _earliest(bucket, name, best)
                continue
            # Many middle parts: look up the substrings between head and tail, by length.
            plain = by_middle.get("")
            if plain is not None:
                best = _earliest(plain, name, best)
            inner = name[head : size - t]
            for m in self.middle_lengths[tail]:
                for a in range(len(inner) - m + 1):
                    found = by_middle.get(inner[a : a + m])
                    if found is not None:
                        best = _earliest(found, name, best)
        return best

    def matching(self, name: str, head: int) -> Iterator[int]:
        size = len(name)
        for t in self.lengths:
            if head + t > size:
                break
            tail = name[size - t :] if t else ""
            by_middle = self.middles.get(tail)
            if by_middle is None:
                continue
            if len(by_middle) <= 8:
                buckets: Iterable[list[tuple[int, Glob]]] = by_middle.values()
            else:  # as in `first`: only the buckets of substrings the name has
                inner = name[head : size - t]
                keys = {""} | {
                    inner[a : a + m]
                    for m in self.middle_lengths[tail]
                    for a in range(len(inner) - m + 1)
                }
                buckets = [by_middle[k] for k in keys if k in by_middle]
            for bucket in buckets:
                yield from (order for order, glob in bucket if glob.matches(name))


def _earliest(bucket: list[tuple[int, Glob]], name: str, best: int | None) -> int | None:
    for order, glob in bucket:
        if best is not None and order >= best:
            break
        if glob.matches(name):
            return order
    return best


_MCP_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
MCP_SERVER_MAX = 30
MCP_NAME_MAX = 64


def _mcp_part(text: str, empty: str) -> str:
    cleaned = _MCP_UNSAFE.sub("-", text.strip())
    return cleaned or empty


def _server_part(server: str) -> str:
    part = _mcp_part(server, "mcp")
    if not part[0].isalpha() or not part[0].isascii():
        part = "mcp-" + part
    return part[:MCP_SERVER_MAX]


def mcp_server_part(server: str) -> str:
    """The `<server>` of the server's tool names, as rules match it (lowercase): two servers
    with the same part would share one `<server>__*`."""
    return _server_part(server).lower()


def mcp_server_problem(server: str) -> str | None:
    """Why an MCP server name would make `<server>__` an ambiguous prefix, or None.

    Tools are named `<server>__<tool>` and matched by `<server>__*`: a server part holding
    `__` (`ops__admin`) or ending in `_` (`ops_`, whose tools are `ops___x`) would have its
    tools matched by another server's glob (`ops__*`), and `a__b` + `c` would collide with
    `a` + `b__c`. Such servers are refused rather than renamed: a rename would move rules.
    """
    cleaned = _mcp_part(server, "mcp")
    if len(cleaned) > MCP_SERVER_MAX:
        return (
            f"is longer than {MCP_SERVER_MAX} characters: its tools' names cut it, so a rule "
            "written with the whole name never matches, and another server may share the cut"
        )
    part = _server_part(server)
    if "__" in part:
        return (
            "contains `__`, the separator of server and tool in MCP tool names: another "
            "server's `<server>__*` glob would match its tools"
        )
    if part.endswith("_"):
        return (
            "ends with `_`, which runs into the `__` separator of MCP tool names: another "
            "server's `<server>__*` glob would match its tools"
        )
    return None


def mcp_tool_name(server: str, tool: str, taken: Iterable[str] = ()) -> str:
    """The tool name an MCP server's tool gets (semantics 10): `<server>__<tool>`.

    Both parts are trimmed, unsafe characters become `-`, empty parts become `mcp` / `tool`,
    a name that does not start with a letter gets `mcp-` in front, the server part is at most
    30 characters and the whole name at most 64 (the tool part is cut first), and collisions
    get `-2`, `-3`, ... inside the length budget.
    """
    server_part = _server_part(server)
    tool_part = _mcp_part(tool, "tool")
    budget = MCP_NAME_MAX - len(server_part) - 2
    base = f"{server_part}__{tool_part[:budget]}"
    used = {t.lower() for t in taken}
    if base.lower() not in used:
        return base
    n = 2
    while True:
        suffix = f"-{n}"
        candidate = f"{server_part}__{tool_part[: budget - len(suffix)]}{suffix}"
        if candidate.lower() not in used:
            return candidate
        n += 1
