"""One simple command's words -> the commands that are decided (contract section 5).

Words arrive after quote removal; `None` is a word whose value is unknown (an expansion, an
unquoted glob). Here:

- the wrappers `timeout`, `nice`, `nohup`, `env`, `command`, `time` are stripped with their
  own options (`wrappers.py`);
- `sh`/`bash`/`zsh`/`dash` (and `rbash`, the ksh family, `ash`, `yash`, `posh`) with `-c` and
  a literal script are transparent: the script is analysed recursively; a shell without `-c`
  runs a script the rules cannot see, and so does any use of a shell whose language is not
  bash's (`fish`, `csh`, `tcsh`, ...: OTHER_SHELLS);
- `xargs CMD` and `find ... -exec CMD ;` are decided themselves and so are their payloads;
  `exec`, `builtin`, `coproc`, `busybox` and `toybox` likewise;
- `sudo` and `doas` payloads, `su -c` scripts and the possible payloads of programs that run
  a command (`setsid`, `ssh`, `nsenter`, ... in RUNNERS) are screened: checked against deny
  and ask rules only (policyctl's choice, fail closed: a deny of `rm *` also meets
  `sudo rm -rf /`, while `exec(sudo apt update)` alone allows `sudo apt update`);
- `xargs -I STR` (`-i`, `--replace`) puts input in place of STR: a payload word holding it is
  unknown (`xargs -I{} sh -c {}` cannot be analysed);
- `eval`, `source`, `.`, `fc`, `compgen`/`complete` with `-C`, `-F` or an expanding `-W`,
  `trap CMD`, `alias x=...`, `hash -p`, `enable NAME` and assignments
  to variables that change what runs (`PATH=`, `LD_*=`, `GIT_*=`: `wrappers.rebinds`) cannot
  be analysed (the command's words are still decided, so deny rules meet them), nor can the
  builtins that set such a variable some other way (`read PATH`, `printf -v PATH`, `unset
  PATH`, namerefs, `set -k`, arithmetic over variables: `variables.py`);
- the file arguments of `tee` are writes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

from .gitconfig import configured_commands, git_problem
from .variables import VARIABLE_BUILTINS, variable_problem
from .wrappers import (
    Words,
    basename,
    is_env_assignment,
    rebinds,
    skip_options,
    strip_wrappers,
)


class Command(NamedTuple):
    """A simple command to decide: its words (unknown ones are `None`), open tail for xargs."""

    # per-call value on the hot path: a NamedTuple (immutable too) is built 5x faster

    words: Words
    text: str
    open_tail: bool = False
    #: a payload only screened against deny and ask rules (`sudo CMD`, `setsid CMD`): it can
    #: make the call stricter, and an allow rule for the outer command is enough to allow it
    screen: bool = False


class Access(NamedTuple):
    """A file the line reads or writes through a redirection or `tee` (`path` None: unknown)."""

    # per-call value on the hot path: a NamedTuple (immutable too) is built 5x faster

    mode: Literal["read", "write"]
    path: str | None
    text: str


@dataclass(frozen=True, slots=True)
class Problem:
    """A part of the line that cannot be analysed, and why."""

    reason: str
    text: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", clip(self.text, 80))


@dataclass(frozen=True, slots=True)
class DirectoryChange:
    """`cd`, `pushd`, `popd`, `env -C`: relative redirection targets can no longer be placed."""

    text: str


Item = Command | Access | Problem | DirectoryChange
#: analyse a literal script one level deeper (the shell stage passes itself)
Recurse = Callable[[str, int], list[Item]]

#: shells whose `-c` script is parsed as bash (`rbash` is bash; the ksh family is close enough)
SHELLS = frozenset({"sh", "bash", "rbash", "zsh", "dash", "ksh", "ash", "hush"}) | {
    "mksh",
    "lksh",
    "ksh93",
    "pdksh",
    "oksh",
    "yash",
    "posh",
}
#: shells whose language is not bash's: whatever they run cannot be analysed
OTHER_SHELLS = frozenset({"fish", "csh", "tcsh", "rc", "es", "xonsh", "elvish", "nu", "pwsh"})
UNANALYSABLE = {
    "eval": "eval runs a string as a command",
    "source": "source runs a file the rules cannot see",
    ".": ". runs a file the rules cannot see",
    "fc": "fc runs commands from the history or an editor",
}
REBINDS = "an assignment that changes what a command runs (PATH, LD_*, GIT_*, ...)"
CHANGES_DIRECTORY = frozenset({"cd", "pushd", "popd"})
#: bash's reserved words: never the name of a simple command bash runs
RESERVED = frozenset(
    {"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case"}
    | {"esac", "select", "function", "in", "[[", "]]", "}"}
)


CLIP = 200


def clip(text: str, limit: int = CLIP) -> str:
    """Provenance text stays readable: a 10,000-character line is shown by its start."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def render(words: Sequence[str | None]) -> str:
    if None not in words:
        text = " ".join(words)  # type: ignore[arg-type]
        return text if len(text) <= CLIP else clip(text)
    return clip(" ".join("<?>" if w is None else w for w in words))


# -- option tables of the payload carriers --------------------------------------------------

_SUDO = (
    set("AbEHiKklnPSsVvBN"),
    set("ugCDhprtUTR"),
)
_XARGS_VALUE = set("adEILnPs")
_XARGS_FLAGS = set("0oprtx")


def expand(
    words: Words, text: str, depth: int, recurse: Recurse, screening: bool = False
) -> list[Item]:
    """Every command, access and problem one simple command contributes."""
    rendered = "" if text else render(words)
    text = text or rendered
    items: list[Item] = []
    if words == ("}",):
        return items  # see _strip_wrappers: the end of `time { ...; }`
    written = words
    words, problem, chdir = strip_wrappers(words)
    if chdir:
        items.append(DirectoryChange(text))
    if problem:
        items.append(Problem(problem, text))
        return items
    if len(words) < len(written) and any(map(rebinds, written[: len(written) - len(words)])):
        # `env PATH=/tmp/evil git status`: the words are still decided (deny meets them)
        items.append(Problem(REBINDS, text))
    if not words:
        return items
    first = words[0]
    if first is None:
        items.append(Problem("the command word is an expansion", text))
        return items
    if first in RESERVED:
        # the grammar misreads compound commands after `time` and `coproc` (`time if a; then
        # b; fi`) as simple commands named `if`: their parts cannot be trusted
        items.append(Problem(f"a compound command ({first}) the parser misread", text))
        return items
    name = basename(first)
    if name in UNANALYSABLE:
        items.append(Problem(UNANALYSABLE[name], text))
        return items
    if name in SHELLS:
        items.extend(_shell(words, text, depth, recurse))
        return items
    if name in OTHER_SHELLS:
        items.append(Command(words, render(words)))
        items.append(Problem(f"{name} runs a script in a language policyctl does not parse", text))
        return items
    items.append(Command(words, rendered if words is written and rendered else render(words)))
    if name not in _SPECIAL:
        return items  # the common case: a command that runs no other command
    if name in CHANGES_DIRECTORY:
        items.append(DirectoryChange(text))
    if name == "trap" and len(words) > 2:
        items.append(Problem("trap runs a string as a command", text))
    elif name == "alias" and any(w is None or "=" in w for w in words[1:]):
        items.append(Problem("alias defines a command from a string", text))
    elif name == "hash" and any(w is None or (w[:1] == "-" and "p" in w) for w in words[1:]):
        items.append(Problem("hash -p binds a command name to another program", text))
    elif name == "enable" and len(words) > 1:
        items.append(Problem("enable changes what builtin names run (or loads builtins)", text))
    elif name == "coproc":
        if any(w in ("{", "}", "(", ")") for w in words[1:]):
            items.append(Problem("coproc with a compound command", text))
        else:
            items.extend(_payload(words[1:], text, depth, recurse, tail=False))
    elif name in ("busybox", "toybox"):
        items.extend(_payload(words[1:], text, depth, recurse, tail=False))
    elif name in ("compgen", "complete"):
        problem = _completion_problem(words)
        if problem:
            items.append(Problem(f"{name} {problem}", text))
    elif name == "xargs":
        items.extend(_xargs(words, text, depth, recurse))
    elif name == "find":
        items.extend(_find(words, text, depth, recurse))
    elif name in ("sudo", "doas", "exec", "builtin"):
        items.extend(_carrier(name, words, text, depth, recurse))
    elif name in ("su", "runuser"):
        items.extend(_su(words, text, depth, recurse))
    elif name in RUNNERS and not screening:
        items.extend(_runner(words, text, depth, recurse))
    elif name == "tee":
        items.extend(_tee(words))
    elif name in VARIABLE_BUILTINS:
        problem = variable_problem((name, *words[1:]))
        if problem:
            items.append(Problem(problem, text))
    elif name == "git":
        problem = git_problem(words)
        if problem:
            items.append(Problem(problem, text))
            for script in configured_commands(words)[:MAX_SCREENED]:
                items.extend(_screened(recurse(script, depth + 1)))
    return items


#: compgen/complete options that take a value (the rest of the word, or the next word)
_COMPLETION_VALUED = frozenset("oAGWFCXPS")


def _completion_problem(words: Words) -> str | None:
    """`compgen -W '$(rm x)'` expands its word list, `-C CMD` runs a command and `-F FUNC` a
    function: strings run as code. A literal word list (`-W 'start stop'`) is fine."""
    for k, w in enumerate(words[1:], 1):
        if w is None:
            return "with an option that is an expansion"
        if w[:1] != "-" or w == "--":
            continue
        for j, letter in enumerate(w[1:], 2):
            if letter in "CF":
                return f"-{letter} runs a command or function"
            if letter in _COMPLETION_VALUED:
                value = w[j:] or (words[k + 1] if k + 1 < len(words) else "")
                if letter == "W" and (value is None or "$" in value or "`" in value):
                    return "-W expands its word list (it can run commands)"
                break
    return None


def _shell(words: Words, text: str, depth: int, recurse: Recurse) -> list[Item]:
    i, has_c = 1, False
    while i < len(words):
        w = words[i]
        if w is None:
            if has_c:  # `xargs -I{} sh -c {}`: the script, or an option before it
                reason = f"{words[0]} -c with a script that is an expansion (not literal)"
                return [Problem(reason, text)]
            return [Problem("a shell option that is an expansion", text)]
        if w == "--" or w == "-":
            i += 1
            break
        if w in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 2
            continue
        if w.startswith("--"):
            i += 1
            continue
        if w[:1] in "-+" and len(w) > 1:
            has_c = has_c or (w[0] == "-" and "c" in w[1:])
            i += 1
            continue
        break
    if not has_c:
        return [Problem(f"{words[0]} runs a script from its input or a file", text)]
    if i >= len(words):
        return [Problem(f"{words[0]} -c without a script", text)]
    script = words[i]
    if script is None:
        return [Problem(f"{words[0]} -c with a script that is not literal", text)]
    return recurse(script, depth + 1)


def _payload(words: Words, text: str, depth: int, recurse: Recurse, tail: bool) -> list[Item]:
    if not words:
        return []
    items = expand(words, text, depth, recurse)
    if tail:
        items = [
            Command(i.words, i.text + " ...", True) if isinstance(i, Command) else i for i in items
        ]
    return items


def _xargs(words: Words, text: str, depth: int, recurse: Recurse) -> list[Item]:
    i = 1
    replace: str | None = None  # -I STR, -i, --replace: STR in a payload word is an input line
    while i < len(words):
        w = words[i]
        if w is None:
            return [Problem("xargs: an option that is an expansion", text)]
        if w == "--":
            i += 1
            break
        if not w.startswith("-") or w == "-":
            break
        if w.startswith("--"):
            if w == "--replace" or w.startswith("--replace="):
                replace = w[len("--replace=") :] if "=" in w else "{}"
            i += 1  # long options: values are attached with `=`
            continue
        letters = w[1:]
        if letters[0] in _XARGS_VALUE:
            value = letters[1:] or (words[i + 1] if i + 1 < len(words) else "")
            if letters[0] == "I":
                if value is None:
                    return [Problem("xargs -I with a replace string that is an expansion", text)]
                replace = value
            i += 1 if len(letters) > 1 else 2
        elif letters[0] in "eil" or all(c in _XARGS_FLAGS for c in letters):
            if letters[0] == "i":
                replace = letters[1:] or "{}"
            i += 1
        else:
            return [Problem(f"xargs: option {w} is not known to policyctl", text)]
    payload = words[i:] or ("echo",)
    if replace is not None:
        # each input line is put in place of the string: a word holding it is unknown, so a
        # command word or `sh -c` script holding it cannot be analysed (`xargs -I{} sh -c {}`)
        payload = tuple(None if w is None or replace in w else w for w in payload)
    return _payload(payload, text, depth, recurse, tail=True)


def _find(words: Words, text: str, depth: int, recurse: Recurse) -> list[Item]:
    items: list[Item] = []
    i = 1
    while i < len(words):
        if words[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(words) and words[j] not in (";", "+"):
                j += 1
            if j >= len(words):
                return [Problem("find -exec without a closing ; or +", text)]
            payload = tuple(None if w is not None and "{}" in w else w for w in words[i + 1 : j])
            if not payload:
                return [Problem("find -exec without a command", text)]
            items.extend(_payload(payload, text, depth, recurse, tail=False))
            i = j
        i += 1
    return items


def _carrier(name: str, words: Words, text: str, depth: int, recurse: Recurse) -> list[Item]:
    i = 1
    rebound = False  # `sudo LD_PRELOAD=x CMD`
    if name == "sudo":
        while i < len(words):
            w = words[i]
            if w is None:
                return [Problem("sudo: an option that is an expansion", text)]
            if w == "--":
                i += 1
                break
            if w.startswith("--"):
                i += 1
                continue
            if not w.startswith("-") or len(w) < 2:
                break
            if w[1] in _SUDO[1]:
                i += 1 if len(w) > 2 else 2
            elif all(c in _SUDO[0] for c in w[1:]):
                i += 1
            else:
                return [Problem(f"sudo: option {w} is not known to policyctl", text)]
        while i < len(words) and is_env_assignment(words[i]):
            rebound = rebound or rebinds(words[i])
            i += 1
    elif name == "doas":
        opts = skip_options(words, 1, {"-n", "-s", "-L"}, {"-u", "-C"}, name)
        if opts.problem:
            return [Problem(opts.problem, text)]
        i = opts.rest
    elif name == "exec":
        opts = skip_options(words, 1, {"-c", "-l", "-cl", "-lc"}, {"-a"}, name)
        if opts.problem:
            return [Problem(opts.problem, text)]
        i = opts.rest
    shell_flags = ("-s", "-i", "--shell", "--login")
    if name in ("sudo", "doas") and i >= len(words) and any(w in shell_flags for w in words):
        return [Problem(f"{name} starts a shell that reads its input", text)]
    if name == "sudo" and _sudo_shell(words[1:i]) and any("$" in (w or "$") for w in words[i:]):
        # `sudo -s CMD` hands CMD to `$SHELL -c` with every character but `$` escaped
        return [Problem("sudo -s/-i runs its command through a shell that expands $", text)]
    payload = _payload(words[i:], text, depth, recurse, tail=False)
    if rebound:
        payload.insert(0, Problem(REBINDS, text))
    return _screened(payload) if name in ("sudo", "doas") else payload


def _sudo_shell(options: Words) -> bool:
    """Whether sudo's options ask for a shell (`-s`, `-i`, `-Es`, `--shell`, `--login`)."""
    return any(
        w in ("--shell", "--login") or (w[:1] == "-" and w[1:2] != "-" and ("s" in w or "i" in w))
        for w in options
        if w is not None
    )


def _screened(items: list[Item]) -> list[Item]:
    return [i._replace(screen=True) if isinstance(i, Command) else i for i in items]


#: programs that run a command given after their own options; policyctl does not know their
#: options, so every later word that could be a command word starts a screened payload
RUNNERS = frozenset(
    {
        "setsid",
        "stdbuf",
        "ionice",
        "chrt",
        "taskset",
        "chroot",
        "unshare",
        "nsenter",
        "flock",
        "watch",
        "strace",
        "ltrace",
        "systemd-run",
        "script",
        "ssh",
        "parallel",
        "pkexec",
        "xvfb-run",
        "firejail",
        "bwrap",
        "proxychains",
        "proxychains4",
        "torsocks",
        "dbus-run-session",
        "valgrind",
        "catchsegv",
        "caffeinate",
        "unbuffer",
        "tmux",
        "sg",
        "entr",
    }
)
MAX_SCREENED = 64
_PAYLOAD_CARRIERS = frozenset(
    {"trap", "alias", "coproc", "busybox", "toybox", "xargs", "find", "sudo", "doas", "exec"}
    | {"builtin", "su", "runuser", "tee", "hash", "enable", "compgen", "complete"}
)
#: every command name `expand` looks at after the command itself (the rest are plain commands)
_SPECIAL = CHANGES_DIRECTORY | RUNNERS | _PAYLOAD_CARRIERS | VARIABLE_BUILTINS | {"git"}


def _runner(words: Words, text: str, depth: int, recurse: Recurse) -> list[Item]:
    items: list[Item] = _runner_scripts(words, text, depth, recurse)
    if any(map(_sets_rebinding_variable, words[1:])):
        # `systemd-run -E 'BASH_FUNC_ls%%=() { rm -rf ~; }' bash -c ls`, `--setenv=PATH=...`
        items.append(Problem(REBINDS, text))
    starts = [k for k, w in enumerate(words) if k and w is not None and w[:1] not in "-+"]
    for k in starts[:MAX_SCREENED]:
        first = words[k]
        if first is not None and basename(first) in RUNNERS:
            continue  # its own suffixes are among these already
        items.extend(_screened(expand(words[k:], text, depth, recurse, screening=True)))
    return items


#: runners that join the words after their options into one script for a shell (`watch`
#: without -x, `ssh` on the remote host, `parallel`, `sg`, `tmux new-session`)
JOINING_RUNNERS = frozenset({"watch", "ssh", "parallel", "sg", "tmux"})
#: a word holding a blank or a shell metacharacter is a script, not a command name
_SCRIPT_CHARS = frozenset(" \t\n;&|<>()$`\\\"'*?[]{}~#!")


def _runner_scripts(words: Words, text: str, depth: int, recurse: Recurse) -> list[Item]:
    """`script -c 'rm -rf ~'`, `flock L -c '...'`, `watch 'rm -rf ~'`: a runner's word that
    holds a blank or a metacharacter is a script run by a shell, so it is analysed (screened)
    as `su -c` is; a joining runner's words are analysed joined, from each word on. A word that
    is an expansion may be the command or the script, and an option with a script glued to it
    (`-qc'rm x'`) cannot be placed: both make the line unanalysable."""
    name = basename(words[0] or "")
    if None in words[1:]:
        return [Problem(f"{name}: a word that is an expansion may be its command or script", text)]
    rest: tuple[str, ...] = words[1:]  # type: ignore[assignment]
    items: list[Item] = []
    scripts: list[str] = []
    for w in rest:
        if not _SCRIPT_CHARS.intersection(w):
            continue
        if w[:2] == "--" and "=" in w:
            scripts.append(w.split("=", 1)[1])  # `--command='rm -rf ~'`
        elif w[:1] in "-+":
            return [Problem(f"{name}: option {w} holds a script policyctl cannot place", text)]
        else:
            scripts.append(w)
    if name in JOINING_RUNNERS and scripts:  # with no script word, joining changes nothing
        starts = [k for k, w in enumerate(rest) if w[:1] not in "-+"]
        scripts.extend(" ".join(rest[k:]) for k in starts)
    for script in dict.fromkeys(scripts[:MAX_SCREENED]):
        items.extend(_screened(recurse(script, depth + 1)))
    return items


def _sets_rebinding_variable(word: str | None) -> bool:
    """A runner's word that sets an environment variable, as an option value or alone."""
    if word is None or "=" not in word:
        return False
    return rebinds(word.split("=", 1)[1] if word[:1] == "-" else word)


def _su(words: Words, text: str, depth: int, recurse: Recurse) -> list[Item]:
    """`su -c SCRIPT`, `runuser -c SCRIPT`: the script is screened; without -c a shell reads
    its input."""
    for i, w in enumerate(words[1:], 1):
        if w in ("-c", "--command") or (w or "").startswith("--command="):
            script = (w or "")[len("--command=") :] if "=" in (w or "") else None
            if script is None:
                script = words[i + 1] if i + 1 < len(words) else None
            if script is None:
                return [Problem(f"{words[0]} -c with a script that is not literal", text)]
            return _screened(recurse(script, depth + 1))
    if "--" in words[:-1]:  # runuser -u bob -- CMD: the command itself
        start = words.index("--") + 1
        return _screened(expand(words[start:], text, depth, recurse))
    return [Problem(f"{words[0]} starts a shell that reads its input", text)]


def _tee(words: Words) -> list[Item]:
    items: list[Item] = []
    options_done = False
    for w in words[1:]:
        if not options_done and w is not None and w.startswith("-") and w != "-":
            if w == "--":
                options_done = True
            continue
        items.append(Access("write", w, f"tee {'<?>' if w is None else w}"))
    return items
