"""Canonical formatting of policy files, keeping comments (YAML round-trip), and migrations."""

from __future__ import annotations

import io
import json
from typing import Any

from .diagnostics import Diagnostic, PolicyError, Source
from .loader import detect_format, parse_text
from .located import LocMap, LocSeq
from .settings import Limits, default_limits


def _check_legacy_list(located: LocMap, name: str) -> None:
    """Every problem that would stop `agents.list` from becoming `agents.entries`, located:
    an item that is no mapping or has no id, an id given twice (the second would silently
    replace the first), an id that `agents.entries` already has."""
    agents = located.get("agents")
    items = agents.get("list") if isinstance(agents, LocMap) else None
    if not isinstance(items, LocSeq):
        return
    entries = agents.get("entries") if isinstance(agents, LocMap) else None
    seen: set[str] = set(entries) if isinstance(entries, LocMap) else set()
    problems: list[Diagnostic] = []
    for i, item in enumerate(items):
        where = items.item_src[i] if i < len(items.item_src) else None
        where = where or items.src or Source(name, 1, 1)
        if not isinstance(item, LocMap) or not isinstance(item.get("id"), str):
            problems.append(
                Diagnostic.make(
                    "PC204",
                    f"agents.list[{i}] has no id, so it cannot become an agents.entries key",
                    where,
                    f"agents.list[{i}]",
                    "add `id: <agent id>` to the item",
                )
            )
            continue
        aid = item["id"]
        if aid in seen:
            problems.append(
                Diagnostic.make(
                    "PC306",
                    f'agent "{aid}" is defined twice',
                    item.val_src.get("id", where),
                    f"agents.list[{i}].id",
                    "merge the two definitions into one",
                )
            )
        seen.add(aid)
    if problems:
        raise PolicyError(problems)


def _migrate_agents_list(data: Any, name: str) -> bool:
    """`agents.list: [{id: x, ...}]` -> `agents.entries: {x: {...}}`, in place."""
    from ruamel.yaml.comments import CommentedMap

    agents = data.get("agents") if isinstance(data, CommentedMap) else None
    if not isinstance(agents, CommentedMap) or not isinstance(agents.get("list"), list):
        return False
    entries = agents.get("entries")
    if entries is None:
        entries = CommentedMap()
    for item in agents["list"]:
        aid = str(item["id"])  # checked by _check_legacy_list
        body = CommentedMap()
        for key, value in item.items():
            if key != "id":
                body[key] = value
        entries[aid] = body
        _carry_comments(item, body, entries, aid)
    keys = list(agents.keys())
    position = keys.index("list")
    before_first_item = agents.ca.items.pop("list", None)
    del agents["list"]
    if "entries" not in agents:
        agents.insert(position, "entries", entries)
        if before_first_item is not None:
            agents.ca.items["entries"] = before_first_item
    return True


def _carry_comments(item: Any, body: Any, entries: Any, aid: str) -> None:
    """Move an `agents.list` item's comments to its `agents.entries` form: each key keeps its
    own, and the comment written after `id: x` (with the lines below it) follows `x:`.
    ruamel keeps a comment on the key it follows; the text is moved as written, so a comment
    line may come out at its old indentation, but it is never dropped."""
    for key, tokens in item.ca.items.items():
        if key == "id":
            after_id = tokens[2] if len(tokens) > 2 else None
            if after_id is not None:
                entries.ca.items[aid] = [None, None, after_id, None]
        else:
            body.ca.items[key] = tokens
    if item.ca.comment is not None:
        body.ca.comment = item.ca.comment


def toml_needs_manual_migration(text: str, name: str, limits: Limits | None = None) -> bool:
    """Whether a TOML file still uses `agents.list`, which `fmt --migrate` cannot rewrite
    there (TOML is left as written: see `format_text`)."""
    located = parse_text(text, name, "toml", limits or default_limits())
    agents = located.get("agents")
    return isinstance(agents, dict) and "list" in agents


def format_text(text: str, name: str, migrate: bool = False, limits: Limits | None = None) -> str:
    """The canonical text of a policy file (YAML or JSON).

    TOML is read with the safe reader (so a broken file is still reported) and returned as
    written: no TOML writer keeps comments and layout well enough to be a formatter, and a
    formatter that loses an operator's comments is worse than none."""
    limits = limits or default_limits()
    fmt = detect_format(name)
    if fmt == "toml":
        parse_text(text, name, fmt, limits)
        return text
    located = parse_text(text, name, fmt, limits)  # the safe reader first: tags, bombs, ...
    if migrate:
        _check_legacy_list(located, name)
    if fmt == "json":
        data = json.loads(text)
        if (
            migrate
            and isinstance(data.get("agents"), dict)
            and isinstance(data["agents"].get("list"), list)
        ):
            agents = data["agents"]
            entries = agents.setdefault("entries", {})
            for item in agents.pop("list"):
                entries[str(item["id"])] = {k: v for k, v in item.items() if k != "id"}
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 100
    yaml.preserve_quotes = True
    data = yaml.load(text)
    if migrate:
        _migrate_agents_list(data, name)
    out = io.StringIO()
    if data is not None:
        yaml.dump(data, out)
    return out.getvalue()
