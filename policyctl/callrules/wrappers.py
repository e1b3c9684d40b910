"""The wrappers stripped before a command is matched (contract section 5), with their options.

`timeout`, `nice`, `nohup`, `env`, `command` and `time` run the command that follows their own
options, so `timeout 5 rm x` is matched as `rm x`. They are recognised by their last path
component too (`/usr/bin/env rm` is `rm`). An option a wrapper does not have, or `env -S`
(which splits a string into a command), cannot be analysed: policyctl does not guess.
"""

from __future__ import annotations

from dataclasses import dataclass

Words = tuple[str | None, ...]


def basename(word: str) -> str:
    return word[word.rfind("/") + 1 :]


# -- option tables: (flags without a value, options that take the next word) ----------------

_TIMEOUT = (
    {"--preserve-status", "--foreground", "-v", "--verbose"},
    {"-s", "-k", "--signal", "--kill-after"},
)
_NICE: tuple[set[str], set[str]] = (set(), {"-n", "--adjustment"})
_ENV = (
    {"-i", "-", "--ignore-environment", "-0", "--null", "-v", "--debug"},
    {"-u", "--unset", "-C", "--chdir"},
)
_COMMAND: tuple[set[str], set[str]] = ({"-p", "-v", "-V", "-pv", "-pV", "-vp", "-Vp"}, set())
_TIME = (
    {"-p", "-v", "-a", "-q", "--portability", "--verbose", "--append", "--quiet"},
    {"-f", "-o", "--format", "--output"},
)


_WRAPPERS = frozenset({"timeout", "nice", "nohup", "env", "command", "time"})


@dataclass(slots=True)
class Options:
    """The result of skipping a command's options: the payload's index, or why we could not."""

    rest: int
    problem: str | None = None


def skip_options(words: Words, start: int, flags: set[str], valued: set[str], name: str) -> Options:
    i = start
    while i < len(words):
        w = words[i]
        if w is None:
            return Options(i, f"{name}: an option that is an expansion")
        if w == "--":
            return Options(i + 1)
        if not w.startswith("-") or (w == "-" and "-" not in flags):
            return Options(i)
        key = w.split("=", 1)[0]
        if w in flags or (key in valued and "=" in w and w.startswith("--")):
            i += 1
        elif w in valued:
            i += 2
        elif len(w) > 2 and w[:2] in valued and not w.startswith("--"):
            i += 1  # -sKILL, -n10: the value is attached
        else:
            return Options(i, f"{name}: option {w} is not known to policyctl")
    return Options(i)


def strip_wrappers(words: Words) -> tuple[Words, str | None, bool]:
    """Strip leading wrappers; returns (words, problem, changes_directory)."""
    chdir = False
    while words and words[0] is not None:
        name = basename(words[0])
        if name not in _WRAPPERS and words[0] not in ("{", "!"):
            break  # the common case: no wrapper
        if words[0] in ("{", "!"):
            # the grammar reads `time { rm x; }` and `! { rm x; }` as a command named `{`
            # (and one named `}`): bash's reserved words are never commands
            words = words[1:]
            continue
        if name == "timeout":
            opts = skip_options(words, 1, *_TIMEOUT, name)
            if opts.problem:
                return words, opts.problem, chdir
            start = opts.rest + 1  # the duration
        elif name == "nice":
            opts = skip_options(words, 1, *_NICE, name)
            adjustment = words[opts.rest] if opts.rest < len(words) else None
            if opts.problem and adjustment is not None and adjustment[1:].isdigit():
                opts = Options(opts.rest + 1)  # nice -10 CMD
            if opts.problem:
                return words, opts.problem, chdir
            start = opts.rest
        elif name == "nohup":
            start = 2 if len(words) > 1 and words[1] == "--" else 1
        elif name == "env":
            opts = skip_options(words, 1, *_ENV, name)
            if opts.problem:  # also `env -S STRING`, which splits a string into a command
                return words, opts.problem, chdir
            start = opts.rest
            chdir = chdir or any(
                w is not None and w.startswith(("-C", "--chdir")) for w in words[1:start]
            )
            while start < len(words) and is_env_assignment(words[start]):
                start += 1
            if start < len(words) and words[start] is None:
                return words, "env: an assignment or command that is an expansion", chdir
        elif name == "command":
            opts = skip_options(words, 1, *_COMMAND, name)
            if opts.problem:
                return words, opts.problem, chdir
            start = opts.rest
        elif name == "time":
            opts = skip_options(words, 1, *_TIME, name)
            if opts.problem:
                return words, opts.problem, chdir
            start = opts.rest
        else:
            break
        if start >= len(words):
            return words, None, chdir  # the wrapper alone (`env`, `time`): decided as written
        words = words[start:]
    return words, None, chdir


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
