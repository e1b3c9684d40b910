"""`git -c NAME=VALUE` and `git --config-env=NAME=VAR`: configuration set on git's command line.

Git runs commands its configuration names: `core.fsmonitor` on `git status`, `core.sshCommand`,
`core.pager`, `core.editor`, `credential.helper`, `diff.*.textconv`, `filter.*.clean`, hooks
under `core.hooksPath`, and `alias.NAME='!CMD'` runs CMD as `git NAME`. The environment form
(`GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=... git status`) is already a rebinding (`GIT_*`,
`wrappers.rebinds`), so the command-line form is judged alike: a setting outside the short list
of names known to run nothing makes the command unanalysable (deny rules still judge it, and
the value of such a `-c` setting, as the command git may run, is screened too).
`--exec-path=DIR` picks the directory git runs its subcommands from, like `GIT_EXEC_PATH`.
"""

from __future__ import annotations

from .wrappers import Words

#: whole sections whose settings only shape output or identity
_SAFE_SECTIONS = frozenset({"user", "author", "committer", "color", "advice", "column", "i18n"})
#: single settings known to run nothing (names are case-insensitive in git)
_SAFE_NAMES = frozenset(
    {
        "core.quotepath",
        "core.autocrlf",
        "core.safecrlf",
        "core.eol",
        "core.filemode",
        "core.ignorecase",
        "core.abbrev",
        "core.longpaths",
        "core.symlinks",
        "core.precomposeunicode",
        "init.defaultbranch",
        "commit.verbose",
        "log.decorate",
        "log.date",
        "pull.rebase",
        "pull.ff",
        "push.default",
        "push.autosetupremote",
        "fetch.prune",
        "merge.ff",
        "merge.conflictstyle",
        "rebase.autostash",
        "rebase.autosquash",
        "status.short",
        "status.branch",
        "diff.noprefix",
        "diff.renames",
        "diff.algorithm",
        "diff.colormoved",
        "grep.linenumber",
        "gc.auto",
    }
)
#: git's own options that take the next word as their value
_VALUED = frozenset({"-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix"})
CONFIG = "git configuration on the command line that can make git run a command (like GIT_*)"


def _runs_nothing(setting: str) -> bool:
    """`user.name=x` runs nothing; `core.fsmonitor=CMD`, `alias.st=!CMD` or an unknown name may."""
    name = setting.split("=", 1)[0]
    section, _, rest = name.partition(".")
    if not rest:
        return False
    # the subsection (`diff.<driver>.textconv`) is case-sensitive, section and key are not
    key = rest.rsplit(".", 1)[-1]
    if section.lower() in _SAFE_SECTIONS:
        return True
    return "." not in rest and f"{section.lower()}.{key.lower()}" in _SAFE_NAMES


def git_problem(words: Words) -> str | None:
    """Why git's own options (before the subcommand) make the command unanalysable, if they do."""
    i = 1
    while i < len(words):
        w = words[i]
        if w is None:
            return "git: an option that is an expansion"
        if w[:1] != "-" or w == "--":
            return None  # the subcommand: its options are its own
        if w == "-c" or w == "--config-env":
            value = words[i + 1] if i + 1 < len(words) else None
            if value is None or not _runs_nothing(value):
                return f"{CONFIG}: {w} {value or '<?>'}"
            i += 2
            continue
        if w.startswith(("--config-env=", "-c")) and w != "-c":
            value = w.split("=", 1)[1] if w.startswith("--") else w[2:]
            if not _runs_nothing(value):
                return f"{CONFIG}: {w}"
        elif w.startswith("--exec-path="):
            return "git --exec-path= picks the programs git runs (like GIT_EXEC_PATH)"
        elif w in _VALUED:
            i += 1
        i += 1
    return None


def configured_commands(words: Words) -> list[str]:
    """The values of the `-c` settings before the subcommand that are not known to run
    nothing: the commands git may run (`alias.x='!CMD'` without its `!`)."""
    found: list[str] = []
    i = 1
    while i < len(words) - 1:
        w = words[i]
        if w is None or w[:1] != "-":
            break  # the subcommand
        setting = words[i + 1]
        if w == "-c" and setting is not None and "=" in setting and not _runs_nothing(setting):
            found.append(setting.split("=", 1)[1].removeprefix("!"))
        i += 2 if w == "-c" or w in _VALUED else 1
    return found
