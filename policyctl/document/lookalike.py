"""Look-alike scope ids: two ids of one map that differ, but that a reviewer reads as one.

Non-ASCII look-alikes are refused where ids are read (PC301). Within ASCII, case and
separator variants (`coder` / `Coder` / `co-der`) and the classic glyph confusions of common
fonts (`0` / `o`, `1` / `l` / `I` / `|`, `rn` / `m`, `vv` / `w`) make a second scope that
reads like the first: `agents.entries.c0der` next to `coder`, or Slack group `C1` next to
`c1`, passes review as a repeat while it selects other runs. Every pair of agent, channel,
account and group ids of one map (after `extends` merging) whose skeletons are equal is
error PC312; ids with different skeletons are never compared.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics import Diagnostic, Source
from ..located import LocMap, format_path
from .keys import normal_key

_GLYPHS = str.maketrans({"0": "o", "1": "l", "i": "l", "|": "l"} | dict.fromkeys("-_. ", ""))


def _same(what: str, one: str, other: str) -> bool:
    """Whether two keys are one id in two spellings: that is PC311's (or merged), not ours."""
    if what == "group":  # group ids are matched as written
        return one.strip() == other.strip()
    return normal_key(what, one) == normal_key(what, other)


def skeleton(ident: str) -> str:
    """The form two look-alike ids share: folded, separators dropped, confusable glyphs merged."""
    text = ident.strip().lower().translate(_GLYPHS)
    return text.replace("rn", "m").replace("vv", "w")


def _scope_maps(doc: LocMap) -> Iterator[tuple[str, tuple[str, ...], LocMap]]:
    """(what the keys name, path, map) for the maps whose keys are scope ids."""
    agents = doc.get("agents")
    if isinstance(agents, LocMap) and isinstance(agents.get("entries"), LocMap):
        yield "agent", ("agents", "entries"), agents["entries"]
    channels = doc.get("channels")
    if not isinstance(channels, LocMap):
        return
    yield "channel", ("channels",), channels
    for name, channel in channels.items():
        if not isinstance(channel, LocMap):
            continue
        if isinstance(channel.get("groups"), LocMap):
            yield "group", ("channels", name, "groups"), channel["groups"]
        accounts = channel.get("accounts")
        if not isinstance(accounts, LocMap):
            continue
        yield "account", ("channels", name, "accounts"), accounts
        for account, settings in accounts.items():
            if isinstance(settings, LocMap) and isinstance(settings.get("groups"), LocMap):
                path = ("channels", name, "accounts", account, "groups")
                yield "group", path, settings["groups"]


def lookalike_ids(doc: LocMap) -> list[Diagnostic]:
    """PC312 for every id that reads like an earlier id of the same map."""
    found: list[Diagnostic] = []
    for what, path, mapping in _scope_maps(doc):
        first: dict[str, str] = {}
        for key in mapping:
            if not isinstance(key, str):
                continue
            shape = skeleton(key)
            other = first.setdefault(shape, key)
            if _same(what, other, key):
                continue
            earlier = _where(mapping, other)
            at = f" ({earlier})" if earlier else ""
            found.append(
                Diagnostic.make(
                    "PC312",
                    f'{what} id "{key}" reads like {what} id "{other}"{at}: two scopes a '
                    "reviewer takes for one",
                    _where(mapping, key),
                    format_path((*path, key)),
                    fix=f'rename one of them, or merge {what} "{key}" into "{other}"',
                )
            )
    return found


def _where(mapping: LocMap, key: str) -> Source | None:
    # a TOML table header (`[agents.entries.builder]`) locates the value, not the key, and a
    # table made only by a longer header (`[agents.entries.builder.tools]`) is located by
    # what it holds
    node = mapping.get(key)
    found = mapping.key_src.get(key) or mapping.val_src.get(key) or getattr(node, "src", None)
    while found is None and isinstance(node, LocMap) and node:
        inner = next(iter(node))
        found = node.key_src.get(inner) or node.val_src.get(inner)
        node = node[inner]
    return found or mapping.src
