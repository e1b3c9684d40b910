"""Canonical formatting of policy files, keeping comments (YAML round-trip), and migrations."""

from __future__ import annotations

import io
import json
from typing import Any

from ..diagnostics import Diagnostic, PolicyError, Source
from ..located import LocMap, LocSeq
from ..names import shown
from ..settings import Limits, default_limits
from .read import detect_format, parse_text


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
    try:
        data = yaml.load(text)
        if migrate:
            _migrate_agents_list(data, name)
        out = io.StringIO()
        if data is not None:
            yaml.dump(data, out)
    except PolicyError:
        raise
    except Exception as exc:  # any round-trip failure is refused, located
        # The round-trip reader resolves plain scalars the safe reader keeps as strings
        # (`Null` and `NULL` are one key to it): refuse the file rather than crash.
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = Source(name, mark.line + 1, mark.column + 1) if mark else Source(name, 1, 1)
        problem = str(getattr(exc, "problem", None) or type(exc).__name__)
        if "duplicate key" in problem:
            problem = "two keys are one key to the YAML writer, as `Null` and `NULL` are"
        problem = problem.splitlines()[0][:80].encode("ascii", "backslashreplace").decode()
        raise PolicyError(
            [
                Diagnostic.make(
                    "PC437",
                    f"fmt cannot rewrite this file without changing it ({problem}): quote the "
                    "key or value so that it is read as a string",
                    where,
                )
            ]
        ) from None
    result = out.getvalue()
    if not migrate:
        _same_meaning(located, parse_text(result, name, fmt, limits), name)
    return result


def _same_meaning(before: Any, after: Any, name: str) -> None:
    """Refuse (PC437, located) a formatted text the loader reads differently from the file:
    the round-trip writer turns a plain `~` key into `null`, `1_000` into `1000`, ..."""
    found = _first_change(before, after, getattr(before, "src", None))
    if found is None:
        return
    where, what = found
    raise PolicyError(
        [
            Diagnostic.make(
                "PC437",
                f"fmt would change what the file says ({what}): quote it so that it stays a "
                "string, as the loader reads it",
                where or Source(name, 1, 1),
            )
        ]
    )


def _first_change(before: Any, after: Any, src: Source | None) -> tuple[Source | None, str] | None:
    if isinstance(before, LocMap) and isinstance(after, LocMap):
        later = list(after)
        for i, key in enumerate(before):
            if i >= len(later) or later[i] != key:
                return before.key_src.get(key, src), f'the key "{shown(key)}" would be rewritten'
            inner = _first_change(before[key], after[key], before.val_src.get(key, src))
            if inner is not None:
                return inner
        if len(later) != len(before):
            return src, "a key would be added"
        return None
    if isinstance(before, LocSeq) and isinstance(after, LocSeq):
        if len(before) != len(after):
            return src, "a list would change length"
        for i, (b, a) in enumerate(zip(before, after, strict=True)):
            item = before.item_src[i] if i < len(before.item_src) else None
            inner = _first_change(b, a, item or src)
            if inner is not None:
                return inner
        return None
    if type(before) is not type(after) or before != after:
        return src, f"the value {before!r} would be rewritten"
    return None
