"""What the command stage shares about words: a command's name by its last path component
(`/usr/bin/env` is `env`) and the assignments that change what a command runs.

Which commands wrap others (`timeout`, `nice`, `env`, ...) and with which options is data: the
command catalog (`commands/commands.toml`, read by `commandline.py`).
"""

from __future__ import annotations

Words = tuple[str | None, ...]


def basename(word: str) -> str:
    return word[word.rfind("/") + 1 :]


#: variables that change which program a command name runs, or what a program runs or loads
#: (contract section 5, red-team finding 3). Fail closed: a broad list, matched on the upper-cased
#: name, by exact name or by prefix. An assignment to one of them (leading, standalone, through
#: `env`/`sudo`, or `export`ed) makes the line unanalysable; the command's words still meet deny.
REBINDING_NAMES = frozenset(
    {"PATH", "IFS", "ENV", "BASH_ENV", "CDPATH", "SHELL", "SHELLOPTS", "BASHOPTS", "PS4"}
    | {"PROMPT_COMMAND", "HOME", "ZDOTDIR", "GCONV_PATH", "HOSTALIASES", "CLASSPATH"}
    | {"PAGER", "MANPAGER", "EDITOR", "VISUAL", "BROWSER", "LESSOPEN", "LESSCLOSE"}
    | {"SSH_ASKPASS", "SUDO_ASKPASS", "NODE_OPTIONS", "NODE_PATH", "RUSTC_WRAPPER"}
    | {"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "MAKEFLAGS", "CC", "CXX"}
)
REBINDING_PREFIXES = (
    "LD_", "DYLD_", "GIT_", "BASH_FUNC_", "PYTHON", "PERL", "RUBY", "LUA_", "NPM_CONFIG_",
    "XDG_", "GOFLAGS", "CARGO_",
)  # fmt: skip


def rebinds(word: str | None) -> bool:
    """`PATH=/tmp/evil`, `LD_PRELOAD+=x`: an assignment that changes what a command runs."""
    if word is None or "=" not in word:
        return False
    name = word.split("=", 1)[0].removesuffix("+").upper()
    return name in REBINDING_NAMES or name.startswith(REBINDING_PREFIXES)


def is_env_assignment(word: str | None) -> bool:
    """`env` and `sudo` take any word holding `=` before the command as an assignment, also
    `BASH_FUNC_ls%%=() { ...; }`, which makes a child bash define the function `ls`."""
    return word is not None and "=" in word
