"""`extends` floors: the scalars that decide whether a base deny applies, or what it expands to,
only narrow through `extends`.

Deny lists are unioned and carried (`merge`, `carry`), but a deny layer applies only when a
scalar says so, and a group entry means what the catalog says it means. A file that extends
another may tighten each of these, never loosen it (an error, like PC358 for `callDefault`):

- sandbox mode (layer 9), `off` < `non-main` < `all`: `agents.defaults.sandbox.mode`, and every
  agent entry's effective mode (its own, else the defaults'); an entry the extending file adds
  has the base's effective mode for that agent (the base defaults') as its floor (PC359);
- the main session under `non-main` (`session.mainKey`, `session.scope`): moving it would take
  the sandbox off the session it now names; refused while any agent is `non-main` in both the
  base and the result (PC359);
- `agents.defaults.subagents.maxSpawnDepth` (layer 10's leaf deny): may only be lowered (PC360);
- `catalog`: groups, profiles, aliases and the sandbox and subagent defaults all come from it,
  so the extending file may only name the base's catalog again (PC361).

Unset values are their defaults (`off`, depth 1, main key `main`, the default catalog). Values
of the wrong type are left to the schema, which reports them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..catalog.model import BUILTIN_CATALOGS, DEFAULT_CATALOG
from ..diagnostics import Diagnostic, PolicyError, Source
from ..located import LocMap
from ..names import fold

#: sandbox modes from loosest to tightest
MODES = ("off", "non-main", "all")

_Path = tuple[str, ...]


def check_floors(base: LocMap, merged: LocMap) -> None:
    """Raise `PolicyError` (every problem, located in the extending file) when `merged` (base +
    the extending file) loosens one of the base's floors."""
    problems = [*_sandbox_modes(base, merged), *_main_session(base, merged)]
    problems += [*_spawn_depth(base, merged), *_catalog(base, merged)]
    if problems:
        raise PolicyError(problems)


# -- reading the documents ------------------------------------------------------------------------


def _get(node: Any, path: _Path) -> Any:
    for part in path:
        if not isinstance(node, LocMap) or part not in node:
            return None
        node = node[part]
    return node


def _where(doc: LocMap, path: _Path) -> Source | None:
    """The value at `path` (or the nearest enclosing key that has a location)."""
    for end in range(len(path), 0, -1):
        parent = _get(doc, path[: end - 1])
        if isinstance(parent, LocMap):
            src = parent.val_src.get(path[end - 1]) or parent.key_src.get(path[end - 1])
            if src is not None:
                return src
    return doc.src


def _mode(doc: LocMap, path: _Path) -> str | None:
    value = _get(doc, path)
    return value if isinstance(value, str) and value in MODES else None


_DEFAULT_MODE: _Path = ("agents", "defaults", "sandbox", "mode")


def _entry_mode(aid: str) -> _Path:
    return ("agents", "entries", aid, "sandbox", "mode")


def effective_modes(doc: LocMap, agents: list[str]) -> dict[str | None, tuple[str, _Path]]:
    """Each agent's sandbox mode and where it comes from (`None`: an agent with no entry)."""
    default = _mode(doc, _DEFAULT_MODE) or "off"
    out: dict[str | None, tuple[str, _Path]] = {None: (default, _DEFAULT_MODE)}
    for aid in agents:
        own = _mode(doc, _entry_mode(aid))
        out[aid] = (own, _entry_mode(aid)) if own else (default, _DEFAULT_MODE)
    return out


def _agent_ids(doc: LocMap) -> list[str]:
    entries = _get(doc, ("agents", "entries"))
    return list(entries) if isinstance(entries, LocMap) else []


def _error(code: str, message: str, doc: LocMap, path: _Path, fix: str) -> Diagnostic:
    return Diagnostic.make(code, message, _where(doc, path), path=".".join(path), fix=fix)


# -- the floors -----------------------------------------------------------------------------------


def _sandbox_modes(base: LocMap, merged: LocMap) -> list[Diagnostic]:
    # merging never drops an entry, so every base agent is among the merged ones
    agents = _agent_ids(merged)
    was, now = effective_modes(base, agents), effective_modes(merged, agents)
    out = []
    for aid, (mode, path) in now.items():
        floor, _ = was[aid]
        if MODES.index(mode) < MODES.index(floor):
            who = f'agent "{aid}"' if aid is not None else "agents without an entry"
            out.append(
                _error(
                    "PC359",
                    f'sandbox mode "{mode}" for {who} loosens the extended file\'s "{floor}"',
                    merged,
                    path,
                    f'remove this key, or set "{floor}" or stricter'
                    + (" (modes: off < non-main < all)" if floor != "all" else ""),
                )
            )
    return out


def _main_key(doc: LocMap) -> str:
    if _get(doc, ("session", "scope")) == "global":
        return "global"
    key = _get(doc, ("session", "mainKey"))
    return fold(key) if isinstance(key, str) and key.strip() else "main"


def _main_session(base: LocMap, merged: LocMap) -> list[Diagnostic]:
    if _main_key(base) == _main_key(merged):
        return []
    agents = _agent_ids(merged)
    was, now = effective_modes(base, agents), effective_modes(merged, agents)
    if not any(was[a][0] == now[a][0] == "non-main" for a in now):
        return []  # no session is sandboxed by `non-main` in both: moving the main one is safe
    changed = ("session", "mainKey")
    if _get(merged, ("session", "scope")) != _get(base, ("session", "scope")):
        changed = ("session", "scope")
    return [
        _error(
            "PC359",
            f'the main session is "{_main_key(merged)}" here but "{_main_key(base)}" in the '
            "extended file: under sandbox mode non-main the session this names would not be "
            "sandboxed",
            merged,
            changed,
            "remove this key (set the main session in the extended file), or set sandbox "
            'mode "all"',
        )
    ]


def _depth(doc: LocMap) -> int:
    value = _get(doc, ("agents", "defaults", "subagents", "maxSpawnDepth"))
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def _spawn_depth(base: LocMap, merged: LocMap) -> list[Diagnostic]:
    floor, depth = _depth(base), _depth(merged)
    if depth <= floor:
        return []
    return [
        _error(
            "PC360",
            f"maxSpawnDepth {depth} raises the extended file's {floor}: subagents at depth "
            f"{floor} would stop being leaves and keep the spawning and session tools",
            merged,
            ("agents", "defaults", "subagents", "maxSpawnDepth"),
            f"remove this key, or set {floor} or lower",
        )
    ]


def _catalog_identity(doc: LocMap) -> str:
    ref = doc.get("catalog")
    if not isinstance(ref, str) or not ref.strip():
        return DEFAULT_CATALOG if ref is None else repr(ref)
    if ref in BUILTIN_CATALOGS:
        return ref
    src = doc.val_src.get("catalog")
    folder = Path(src.file).parent if src and not src.file.startswith("<") else Path()
    return str((folder / ref).resolve())


def _catalog(base: LocMap, merged: LocMap) -> list[Diagnostic]:
    was, now = _catalog_identity(base), _catalog_identity(merged)
    if was == now:
        return []
    return [
        _error(
            "PC361",
            f'catalog "{merged.get("catalog")}" is not the extended file\'s '
            f'"{base.get("catalog") or "the default"}": the base\'s group entries, profiles '
            "and default denies would change meaning",
            merged,
            ("catalog",),
            "remove this key (a file that extends another uses its catalog), or set the "
            "catalog in the extended file",
        )
    ]
