"""Canonical formatting of policy files, keeping comments (YAML round-trip), and migrations."""

from __future__ import annotations

import io
import json
from typing import Any

from .diagnostics import Diagnostic, PolicyError, Source
from .loader import detect_format, parse_text
from .settings import Limits, default_limits


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
        if not isinstance(item, dict) or "id" not in item:
            raise PolicyError(
                [Diagnostic.make("PC204", "agents.list item without id", Source(name, 1, 1))]
            )
        aid = str(item["id"])
        if aid in entries:
            raise PolicyError(
                [Diagnostic.make("PC306", f'agent "{aid}" is defined twice', Source(name, 1, 1))]
            )
        body = CommentedMap()
        for key, value in item.items():
            if key != "id":
                body[key] = value
        entries[aid] = body
    keys = list(agents.keys())
    position = keys.index("list")
    del agents["list"]
    if "entries" not in agents:
        agents.insert(position, "entries", entries)
    return True


def format_text(text: str, name: str, migrate: bool = False, limits: Limits | None = None) -> str:
    """The canonical text of a policy file (YAML or JSON). TOML is not rewritten."""
    limits = limits or default_limits()
    fmt = detect_format(name)
    if fmt == "toml":
        raise PolicyError(
            [
                Diagnostic.make(
                    "PC110",
                    "policyctl fmt rewrites YAML and JSON files; TOML files are left as written",
                    Source(name, 1, 1),
                )
            ]
        )
    parse_text(text, name, fmt, limits)  # the safe reader first: tags, bombs, duplicates refused
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
