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

    names: list[str] = Field(
        [], description="Other command names this model applies to (`dash`, `zsh` share `bash`'s)."
    )
    transparent: bool = Field(
        False,
        description="A wrapper: only the command it runs is decided (`timeout 5 rm x` is `rm x`).",
    )
    screen: bool = Field(
        False, description="Its payload is checked against deny and ask rules only (`sudo CMD`)."
    )
    flags: list[str] = Field(
        [], description="Options without a value (`-v`, `--verbose`); short ones cluster (`-rf`)."
    )
    valued: list[str] = Field(
        [],
        description="Options that take a value: the rest of a short option's word or the "
        "next word; after `=` or the next word for a long one.",
    )
    optional: list[str] = Field(
        [], description="Options whose value is only ever attached (`-i{}`, `--replace=X`)."
    )
    other_options: Literal["unanalysable", "flag"] = Field(
        "unanalysable",
        description="What an option not listed is: `unanalysable` (the line is) or `flag`.",
    )
    options_end: Literal["first_operand", "never"] = Field(
        "first_operand",
        description="`first_operand` (POSIX: options end at the first operand) or `never` "
        "(options anywhere before `--`).",
    )
    options_after_skip: bool = Field(
        False,
        description="Options may follow the skipped operands (`ssh HOST -v CMD`, `flock "
        "LOCK -c CMD`).",
    )
    plus_options: bool = Field(False, description="`+o NAME` style options (the shells).")
    cluster_values: Literal["rest", "next"] = Field(
        "rest",
        description="A valued letter inside a cluster takes the `rest` of the word, or the "
        "`next` word (bash: `-co NAME`).",
    )
    numeric_options: bool = Field(False, description="`-10` is an option (`nice -10 CMD`).")
    assignments: bool = Field(
        False, description="`NAME=VALUE` words before the payload are assignments (`env`, `sudo`)."
    )
    changes_directory: list[str] = Field(
        [], description="Options that change the directory the payload runs in (`env -C`)."
    )
    unanalysable: dict[str, str] = Field(
        {},
        description="Option (or subcommand) -> why its presence makes the line unanalysable.",
    )
    opaque: dict[str, str] = Field(
        {},
        description="Option -> the language of the code it carries, which is not analysed "
        "(the command is decided by its words).",
    )
    runs: dict[str, Runs] = Field(
        {},
        description="Option -> `shell` (its value is a shell script) or `argv-until-"
        "semicolon` (`find -exec CMD ;`).",
    )
    placeholder: str | None = Field(
        None,
        description="A string that stands for input in a run option's words (`find`'s "
        "`{}`): such a word is unknown.",
    )
    replace: dict[str, str] = Field(
        {},
        description="Option -> its default replace string (`xargs -I`, `-i`): a payload "
        "word holding it is unknown.",
    )
    open_tail: bool = Field(False, description="The payload gets more words from input (`xargs`).")
    default_payload: list[str] = Field(
        [], description="The command run when no payload is given (`xargs` runs `echo`)."
    )
    skip_operands: int = Field(
        0, ge=0, le=4, description="Operands before the payload (`timeout DURATION`, `ssh HOST`)."
    )
    payload: Payload = Field(
        "none",
        description="What the operands are: `none`, `command` (an argv), `subcommand`, "
        "`shell-script` (with `script_flag`), `shell-option` (`su -c`), `after-"
        "double-dash` (`kubectl exec`), `any-word` (every later word may start "
        "a screened payload).",
    )
    joined: bool = Field(
        False, description="The payload's words are joined into one shell script (`ssh`, `watch`)."
    )
    argv_options: list[str] = Field(
        [], description="Options that keep a joined payload an argv (`watch -x`)."
    )
    script_flag: str | None = Field(
        None, description="The option that makes the first operand a script (`-c`)."
    )
    shell_options: list[str] = Field(
        [],
        description="Options that start a shell (`sudo -s`): without a payload it reads its input.",
    )
    subcommands: dict[str, CommandRow] = Field(
        {}, description="Subcommand -> its own model (its options are read after it)."
    )
    other_subcommands: Literal["plain", "unanalysable", "setting"] = Field(
        "plain",
        description="What a subcommand not listed is: `plain` (decided by its words), "
        "`unanalysable`, or `setting`: the words are a git setting's `NAME VALUE` (`git config "
        "alias.x '!cmd'`), decided like `git -c NAME=VALUE`.",
    )
    config: list[str] = Field(
        [],
        description="Options whose value is a git setting `NAME=VALUE` (`git -c`), sorted "
        "by `git_config`.",
    )
    config_env: list[str] = Field(
        [],
        description="Options whose value is a git setting taken from the environment "
        "(`--config-env`).",
    )
    reads: list[str] = Field([], description="Options whose value is a file read.")
    writes: list[str] = Field([], description="Options whose value is a file written.")
    operands: Access = Field(
        "none", description="What the operands are: `none`, `read` or `write` files."
    )
    last_operand: Access = Field(
        "none", description="What the last of several operands is (`cp`'s destination: `write`)."
    )
    keyed_operands: dict[str, Literal["read", "write"]] = Field(
        {}, description="`KEY=FILE` operands read or written (`dd if=`, `of=`)."
    )
    pattern_operand: bool = Field(
        False,
        description="The first operand is a pattern or script, not a file, unless a "
        "`pattern_options` option gave one.",
    )
    pattern_options: list[str] = Field(
        [], description="Options that give the pattern or script (`grep -e`, `sed -f`)."
    )
    write_options: list[str] = Field(
        [], description="Options that make the operands written (`sed -i`, `find -delete`)."
    )
    mode_operand: bool = Field(
        False,
        description="The first operand is a mode or owner (`chmod`), unless a `reads` "
        "option is given.",
    )


class GitConfigRow(_Strict):
    """How `git -c NAME=VALUE` settings are sorted (names are case-insensitive)."""

    safe_sections: list[str] = Field([], description="Sections whose settings run nothing.")
    safe_names: list[str] = Field([], description="Single settings known to run nothing.")
    runs: list[str] = Field(
        [], description="Globs of settings whose value git runs as a shell command."
    )


class CommandsFile(_Strict):
    """A command catalog file (`commands/commands.toml`)."""

    commands: dict[str, CommandRow] = Field({}, description="Command name -> its model.")
    git_config: GitConfigRow | None = Field(None, description="git settings on the command line.")
