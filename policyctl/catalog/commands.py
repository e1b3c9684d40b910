"""The command catalog: what policyctl knows about what a command does, as data.

`commands/commands.toml` (shipped; `commandfile.py` is its format) says for each modelled
command which options take a value, where its subcommand stands, which options or operands
run another program or a shell string, and which operands are files read or written. The
shell analysis (`callrules/commandline.py`) reads it; an operator's entries (the policy's
`commands` key) replace the shipped entry of the same name. Each entry keeps where it was
written, so `policyctl explain` can say where a piece of knowledge comes from.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import lru_cache
from types import MappingProxyType
from typing import Any

from .model import data_dir

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass(frozen=True, slots=True)
class CommandSpec:
    """One command's model, frozen; `source` is where the entry was written (file:line)."""

    name: str
    source: str
    transparent: bool = False
    screen: bool = False
    flags: frozenset[str] = frozenset()
    valued: frozenset[str] = frozenset()
    optional: frozenset[str] = frozenset()
    other_options: str = "unanalysable"
    options_end: str = "first_operand"
    options_after_skip: bool = False
    plus_options: bool = False
    cluster_values: str = "rest"
    numeric_options: bool = False
    assignments: bool = False
    changes_directory: frozenset[str] = frozenset()
    unanalysable: Mapping[str, str] = field(default_factory=dict)
    opaque: Mapping[str, str] = field(default_factory=dict)
    runs: Mapping[str, str] = field(default_factory=dict)
    placeholder: str | None = None
    replace: Mapping[str, str] = field(default_factory=dict)
    open_tail: bool = False
    default_payload: tuple[str, ...] = ()
    skip_operands: int = 0
    payload: str = "none"
    joined: bool = False
    argv_options: frozenset[str] = frozenset()
    script_flag: str | None = None
    shell_options: frozenset[str] = frozenset()
    subcommands: Mapping[str, CommandSpec] = field(default_factory=dict)
    other_subcommands: str = "plain"
    config: frozenset[str] = frozenset()
    config_env: frozenset[str] = frozenset()
    reads: frozenset[str] = frozenset()
    writes: frozenset[str] = frozenset()
    operands: str = "none"
    last_operand: str = "none"
    keyed_operands: Mapping[str, str] = field(default_factory=dict)
    pattern_operand: bool = False
    pattern_options: frozenset[str] = frozenset()
    write_options: frozenset[str] = frozenset()
    mode_operand: bool = False
    #: derived: the options that need more than skipping (they run code, name files, ...)
    acting: frozenset[str] = field(init=False, repr=False, compare=False)
    #: derived: whether operands can be files
    files: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        acting = (
            set(self.unanalysable)
            | self.changes_directory
            | set(self.runs)
            | self.config
            | self.config_env
            | self.reads
            | self.writes
        )
        object.__setattr__(self, "acting", frozenset(acting))
        files = (
            self.operands != "none"
            or self.last_operand != "none"
            or bool(self.keyed_operands)
            or bool(self.write_options)
        )
        object.__setattr__(self, "files", files)


@dataclass(frozen=True, slots=True)
class GitConfig:
    """Which `git -c NAME=VALUE` settings run nothing, and which run their value."""

    safe_sections: frozenset[str] = frozenset()
    safe_names: frozenset[str] = frozenset()
    runs: tuple[str, ...] = ()

    def kind(self, name: str) -> str:
        """ "safe", "runs" (the value is a shell command) or "unknown" (it may run code)."""
        folded = name.lower()
        section, _, rest = folded.partition(".")
        if not rest:
            return "unknown"
        key = rest.rsplit(".", 1)[-1]
        if section in self.safe_sections:
            return "safe"
        if "." not in rest and f"{section}.{key}" in self.safe_names:
            return "safe"
        if any(fnmatchcase(folded, pattern) for pattern in self.runs):
            return "runs"
        return "unknown"


@dataclass(frozen=True, slots=True)
class CommandCatalog:
    #: every name (an entry's key and its `names`) -> its model
    by_name: Mapping[str, CommandSpec]
    git_config: GitConfig

    def get(self, name: str) -> CommandSpec | None:
        return self.by_name.get(name)

    def with_entries(
        self, rows: Mapping[str, Mapping[str, Any]], sources: Mapping[str, str]
    ) -> CommandCatalog:
        """This catalog with an operator's entries added (`sources`: where each was written);
        an entry replaces the shipped one of the same name (and of each name it lists)."""
        by_name = dict(self.by_name)
        for name, row in rows.items():
            spec = _spec(name, row, sources.get(name, "<policy>"))
            for alias in (name, *row.get("names", ())):
                by_name[alias] = spec
        return CommandCatalog(MappingProxyType(by_name), self.git_config)


_LISTS = ("flags", "valued", "optional", "changes_directory", "argv_options", "shell_options")
_SETS = (*_LISTS, "config", "config_env", "reads", "writes", "pattern_options", "write_options")


def _spec(name: str, row: Mapping[str, Any], source: str) -> CommandSpec:
    values: dict[str, Any] = {}
    for key, value in row.items():
        if key == "names":
            continue
        if key in _SETS:
            values[key] = frozenset(value)
        elif key == "default_payload":
            values[key] = tuple(value)
        elif key == "subcommands":
            values[key] = MappingProxyType(
                {sub: _spec(f"{name} {sub}", r, source) for sub, r in value.items()}
            )
        elif isinstance(value, dict):
            values[key] = MappingProxyType(dict(value))
        else:
            values[key] = value
    return CommandSpec(name, source, **values)


_HEADER = re.compile(r"^\[commands\.([A-Za-z0-9_-]+)\]", re.M)


def catalog_from_text(text: str, shown: str) -> CommandCatalog:
    """A catalog from a commands file already known to be valid (the shipped one)."""
    data = tomllib.loads(text)
    lines = {m.group(1): text.count("\n", 0, m.start()) + 1 for m in _HEADER.finditer(text)}
    by_name: dict[str, CommandSpec] = {}
    for name, row in data.get("commands", {}).items():
        spec = _spec(name, row, f"{shown}:{lines.get(name, 1)}")
        for alias in (name, *row.get("names", ())):
            by_name[alias] = spec
    git = data.get("git_config", {})
    config = GitConfig(
        frozenset(s.lower() for s in git.get("safe_sections", ())),
        frozenset(s.lower() for s in git.get("safe_names", ())),
        tuple(s.lower() for s in git.get("runs", ())),
    )
    return CommandCatalog(MappingProxyType(by_name), config)


BUILTIN_COMMANDS = "commands.toml"


@lru_cache(maxsize=1)
def builtin_commands() -> CommandCatalog:
    """The shipped command catalog, read once per process."""
    path = data_dir("commands") / BUILTIN_COMMANDS
    return catalog_from_text(path.read_text(encoding="utf-8"), f"commands/{BUILTIN_COMMANDS}")
