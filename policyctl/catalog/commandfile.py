"""The command catalog's file format (pydantic, strict): `commands/commands.toml` and the
entries an operator adds with a policy's `commands` key. `policyctl schema --kind commands`
is generated from it; the runtime reads the shipped file without building these models
(tests check the shipped file against them)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..formats.strict import StrictModel as _Strict

Payload = Literal[
    "none",
    "command",
    "subcommand",
    "shell-script",
    "shell-option",
    "after-double-dash",
    "any-word",
]
Runs = Literal["shell", "argv-until-semicolon"]
Access = Literal["none", "read", "write"]


class CommandRow(_Strict):
    """What one command (and the other names in `names`) does with its words."""

    names: list[str] = []
    #: a wrapper: only the command it runs is decided (`timeout 5 rm x` is `rm x`)
    transparent: bool = False
    #: the payload is checked against deny and ask rules only (`sudo CMD`)
    screen: bool = False
    flags: list[str] = []
    valued: list[str] = []
    #: options whose value is only ever attached (`-i{}`, `--replace=X`)
    optional: list[str] = []
    other_options: Literal["unanalysable", "flag"] = "unanalysable"
    #: POSIX: options end at the first operand; GNU-style commands take them anywhere
    options_end: Literal["first_operand", "never"] = "first_operand"
    options_after_skip: bool = False
    plus_options: bool = False
    #: a valued letter inside a cluster takes the rest of the word, or (bash) the next word
    cluster_values: Literal["rest", "next"] = "rest"
    numeric_options: bool = False
    assignments: bool = False
    changes_directory: list[str] = []
    #: option -> why its presence makes the line unanalysable
    unanalysable: dict[str, str] = {}
    #: option or operand -> the language of the code it carries (decided by the words only)
    opaque: dict[str, str] = {}
    runs: dict[str, Runs] = {}
    placeholder: str | None = None
    replace: dict[str, str] = {}
    open_tail: bool = False
    default_payload: list[str] = []
    skip_operands: int = Field(0, ge=0, le=4)
    payload: Payload = "none"
    joined: bool = False
    argv_options: list[str] = []
    script_flag: str | None = None
    shell_options: list[str] = []
    subcommands: dict[str, CommandRow] = {}
    other_subcommands: Literal["plain", "unanalysable"] = "plain"
    config: list[str] = []
    config_env: list[str] = []
    reads: list[str] = []
    writes: list[str] = []
    operands: Access = "none"
    last_operand: Access = "none"
    keyed_operands: dict[str, Literal["read", "write"]] = {}
    pattern_operand: bool = False
    pattern_options: list[str] = []
    write_options: list[str] = []
    mode_operand: bool = False


class GitConfigRow(_Strict):
    safe_sections: list[str] = []
    safe_names: list[str] = []
    runs: list[str] = []


class CommandsFile(_Strict):
    commands: dict[str, CommandRow] = {}
    git_config: GitConfigRow | None = None
