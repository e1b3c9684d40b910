"""One simple command's words -> the commands that are decided (contract section 5).

Words arrive after quote removal; `None` is a word whose value is unknown (an expansion, an
unquoted glob). What a command does with its words is data, the command catalog
(`commands/commands.toml`, read by `commandline.scan`); here it is acted on:

- a wrapper (`timeout`, `nice`, `env`, `command`, `time`, a shell with `-c SCRIPT`) is
  transparent: only what it runs is decided;
- a command with a subcommand behind global options (`git -C . push`) is decided in its
  canonical form (`git push`); deny and ask rules also meet the words as written;
- what a command runs (its payload after its options, an option's value that is a shell
  string or an argv, a `git -c` setting that runs its value) is decided as the code it is;
  a payload of `sudo`, `doas`, `su -c` and the runners (`setsid`, `ssh`, ...) is screened:
  checked against deny and ask rules only (a deny of `rm *` also meets `sudo rm -rf /`,
  while `exec(sudo apt update)` alone allows `sudo apt update`);
- an option the model does not know, an option that is an expansion, or a value that cannot
  be analysed makes the line unanalysable (the command's words are still decided);
- the files a modelled command reads or writes (`cat F`, `cp A B`, `sed -i`, `dd of=`) are
  accesses, decided with the read or write tool's rules like redirections;
- `eval`, `source`, `.`, `fc`, `compgen`/`complete` with `-C`, `-F` or an expanding `-W`,
  `trap CMD`, `alias x=...`, `hash -p`, `enable NAME`, assignments to variables that change
  what runs (`PATH=`, `LD_*=`, `GIT_*=`: `wrappers.rebinds`) and the builtins that set such a
  variable (`variables.py`) cannot be analysed (the words are still decided);
- nesting (`sudo sudo ...`, `xargs xargs ...`) deeper than MAX_NESTING is unanalysable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

from ..catalog.commands import CommandCatalog, CommandSpec, builtin_commands
from .commandline import Option, Scan, scan
from .gitconfig import setting_scripts
from .variables import VARIABLE_BUILTINS, variable_problem
from .wrappers import Words, basename, is_env_assignment, rebinds


class Command(NamedTuple):
    """A simple command to decide: its words (unknown ones are `None`), open tail for xargs."""

    # per-call value on the hot path: a NamedTuple (immutable too) is built 5x faster

    words: Words
    text: str
    open_tail: bool = False
    #: a payload only screened against deny and ask rules (`sudo CMD`, `setsid CMD`): it can
    #: make the call stricter, and an allow rule for the outer command is enough to allow it
    screen: bool = False
    #: the words as written when `words` is the canonical form (`git -C . push` -> `git
    #: push`): deny and ask rules meet both, an allow rule either
    written: Words | None = None
    #: the command catalog entry that told how the words were read (file:line)
    source: str | None = None


class Access(NamedTuple):
    """A file the line reads or writes: a redirection, or a modelled command's file operand or
    option (`path` None: unknown)."""

    # per-call value on the hot path: a NamedTuple (immutable too) is built 5x faster

    mode: Literal["read", "write"]
    path: str | None
    text: str
    #: the command catalog entry that made the operand a file (None: a redirection)
    source: str | None = None


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
    """The words as text for provenance, clipped; a long command costs only its first words
    (a payload is rendered at each level it is carried through: never the whole line)."""
    if len(words) <= 16 and None not in words:
        text = " ".join(words)  # type: ignore[arg-type]
        return text if len(text) <= CLIP else clip(text)
    shown: list[str] = []
    size = 0
    for w in words:
        shown.append("<?>" if w is None else w[: CLIP + 1])
        size += len(shown[-1]) + 1
        if size > CLIP:
            break
    return clip(" ".join(shown))


#: wrappers within wrappers (`sudo sudo ...`, `xargs xargs ...`) beyond this are unanalysable
MAX_NESTING = 16
NESTING = f"commands nested in one another deeper than {MAX_NESTING} levels"


def is_bash_like(name: str, catalog: CommandCatalog | None = None) -> bool:
    spec = (catalog or builtin_commands()).get(name)
    return spec is not None and spec.payload == "shell-script"


def expand(
    words: Words,
    text: str,
    depth: int,
    recurse: Recurse,
    catalog: CommandCatalog | None = None,
    nesting: int = 0,
) -> list[Item]:
    """Every command, access and problem one simple command contributes."""
    rendered = "" if text else render(words)
    text = text or rendered
    items: list[Item] = []
    if words == ("}",):
        return items  # the end of `time { ...; }`, which the grammar reads as a command
    while words and words[0] in ("{", "!"):
        # the grammar reads `time { rm x; }` and `! { rm x; }` as a command named `{`
        words = words[1:]
    if not words:
        return items
    if nesting > MAX_NESTING:
        items.append(Problem(NESTING, text))
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
    if name in OTHER_SHELLS:
        items.append(Command(words, render(words)))
        items.append(Problem(f"{name} runs a script in a language policyctl does not parse", text))
        return items
    if name == "coproc" and any(w in ("{", "}", "(", ")") for w in words[1:]):
        items.append(Command(words, render(words)))
        items.append(Problem("coproc with a compound command", text))
        return items
    catalog = catalog or builtin_commands()
    spec = catalog.by_name.get(name)
    if spec is not None:
        return _modelled(spec, words, text, depth, recurse, catalog, nesting)
    items.append(Command(words, rendered or render(words)))
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
    elif name in ("compgen", "complete"):
        problem = _completion_problem(words)
        if problem:
            items.append(Problem(f"{name} {problem}", text))
    elif name in VARIABLE_BUILTINS:
        problem = variable_problem((name, *words[1:]))
        if problem:
            items.append(Problem(problem, text))
    return items


_SPECIAL = (
    CHANGES_DIRECTORY
    | VARIABLE_BUILTINS
    | {"trap", "alias", "hash", "enable"}
    | {
        "compgen",
        "complete",
    }
)


class _Context(NamedTuple):
    text: str
    depth: int
    recurse: Recurse
    catalog: CommandCatalog
    nesting: int


def _modelled(
    spec: CommandSpec,
    words: Words,
    text: str,
    depth: int,
    recurse: Recurse,
    catalog: CommandCatalog,
    nesting: int,
) -> list[Item]:
    if (
        spec.payload == "subcommand"
        and len(words) > 1
        and words[1] is not None
        and words[1][:1] not in ("-", "+")
        and words[1] not in spec.subcommands
        and spec.other_subcommands == "plain"
    ):
        # the common case (`git status`, `npm run test`): no global option, no modelled
        # subcommand: the words are the canonical form and run nothing else
        return [Command(words, text, False, False, None, spec.source)]
    ctx = _Context(text, depth, recurse, catalog, nesting)
    items: list[Item] = []
    canonical, _ = _read(spec, words, 1, ctx, items)
    # a wrapper's own words are not decided, only what it runs (or why that is not known);
    # a wrapper alone (`env`, `timeout 5`) is decided as written
    if not spec.transparent or not items:
        written = None if canonical is words or canonical == words else words
        shown = render(canonical) if written is not None else (text or render(words))
        items.insert(0, Command(canonical, shown, False, False, written, spec.source))
    return items


def _read(
    spec: CommandSpec, words: Words, start: int, ctx: _Context, items: list[Item]
) -> tuple[Words, bool]:
    """Act on `words[start:]` as `spec` models them; returns the canonical words and whether
    a problem stopped the reading."""
    found = scan(spec, words, start)
    if found.problem:
        items.append(Problem(found.problem, ctx.text))
        return words, True
    canonical = words
    acting = spec.acting
    for option in found.options:
        if option.name not in acting:
            continue  # the common case: an option that only shapes the command's output
        _option(spec, option, ctx, items)
        if option.name in spec.unanalysable and isinstance(items[-1], Problem):
            return words, True  # where its payload starts is not known either
    if spec.files:
        _operand_accesses(spec, words, found, items)
    payload = spec.payload
    if payload == "subcommand":
        return _subcommand(spec, words, found, ctx, items)
    if payload == "command":
        _payload(spec, words, found, ctx, items)
    elif payload == "shell-script":
        _shell_script(spec, words, found, ctx, items)
    elif payload == "shell-option":
        if not any(o.name in spec.runs for o in found.options):
            if found.after_dashes is not None and found.after_dashes < len(words):
                _run_argv(spec, words[found.after_dashes :], ctx, items, spec.screen)
            else:
                items.append(Problem(f"{spec.name} starts a shell that reads its input", ctx.text))
    elif payload == "after-double-dash" and found.after_dashes is not None:
        _run_argv(spec, words[found.after_dashes :], ctx, items, spec.screen)
    elif payload == "any-word":
        _any_word(spec, words, start, ctx, items)
    return canonical, False


def _option(spec: CommandSpec, option: Option, ctx: _Context, items: list[Item]) -> None:
    name, value = option.name, option.value
    if name in spec.unanalysable and (option.has_value or name not in spec.optional):
        items.append(Problem(spec.unanalysable[name], ctx.text))
    if name in spec.changes_directory:
        items.append(DirectoryChange(ctx.text))
    runs = spec.runs.get(name)
    if runs == "shell":
        if value is None:
            items.append(Problem(f"{spec.name} {name} with a script that is not literal", ctx.text))
        else:
            items.extend(_screen_if(spec.screen, ctx.recurse(value, ctx.depth + 1)))
    elif runs == "argv-until-semicolon" and option.argv is not None:
        argv = option.argv
        if spec.placeholder:
            argv = tuple(None if w is not None and spec.placeholder in w else w for w in argv)
        if not argv:
            items.append(Problem(f"{spec.name} {name} without a command", ctx.text))
        else:
            _run_argv(spec, argv, ctx, items, spec.screen)
    if name in spec.config or name in spec.config_env:
        scripts = setting_scripts(ctx.catalog.git_config, value, name in spec.config_env)
        if isinstance(scripts, str):
            items.append(Problem(scripts, ctx.text))
        else:
            for script in scripts:
                items.extend(ctx.recurse(script, ctx.depth + 1))
    if name in spec.reads or name in spec.writes:
        mode: Literal["read", "write"] = "read" if name in spec.reads else "write"
        items.append(Access(mode, value, f"{spec.name} {name} {value or '<?>'}", spec.source))


def _operand_accesses(spec: CommandSpec, words: Words, found: Scan, items: list[Item]) -> None:
    operands = found.operands
    if found.rest is not None:
        operands = [*operands, *range(found.rest, len(words))]
    if not operands:
        return
    named = {o.name for o in found.options}
    skip = 0
    if spec.pattern_operand and not named & spec.pattern_options:
        skip = 1  # `grep PATTERN FILE`, `sed SCRIPT FILE`
    if spec.mode_operand and not named & spec.reads:
        skip = 1  # `chmod MODE FILE`
    files = operands[skip:]
    if len(files) > MAX_SCREENED:
        # each file is decided (and resolved) on its own: a bounded number per command
        items.append(
            Problem(f"{spec.name} with more than {MAX_SCREENED} file operands", render(words))
        )
        files = files[:MAX_SCREENED]
    mode = spec.operands
    if named & spec.write_options:
        mode = "write"  # `sed -i`, `find -delete`
    if mode == "none" and spec.last_operand == "none" and not spec.keyed_operands:
        return
    last = spec.last_operand
    for k, index in enumerate(files):
        word = words[index]
        if spec.keyed_operands:
            key, eq, value = (word or "").partition("=")
            access = spec.keyed_operands.get(key) if eq else None
            if word is None:
                items.append(Access("write", None, "an operand that is an expansion", spec.source))
            elif access is not None:
                items.append(Access(access, value, word, spec.source))  # type: ignore[arg-type]
            continue
        this = last if last != "none" and k == len(files) - 1 and len(files) > 1 else mode
        if this == "none" or word == "-":
            continue
        shown = f"{spec.name} {'<?>' if word is None else word}"
        items.append(Access(this, word, clip(shown, 80), spec.source))  # type: ignore[arg-type]


def _subcommand(
    spec: CommandSpec, words: Words, found: Scan, ctx: _Context, items: list[Item]
) -> tuple[Words, bool]:
    index = found.payload
    if index is None:
        return words, False
    canonical = words if index == 1 else (words[0], *words[index:])
    sub_word = words[index]
    if sub_word is not None and sub_word in spec.unanalysable:
        items.append(Problem(spec.unanalysable[sub_word], ctx.text))
        return canonical, True
    sub = spec.subcommands.get(sub_word) if sub_word is not None else None
    if sub is None:
        if spec.other_subcommands == "setting":
            _setting(spec, words, index, ctx, items)
        elif spec.other_subcommands == "unanalysable":
            shown = "<?>" if sub_word is None else sub_word
            items.append(Problem(f"{spec.name}: subcommand {shown} has no model", ctx.text))
        return canonical, False
    _, problem = _read(sub, words, index + 1, ctx, items)
    return canonical, problem


def _setting(spec: CommandSpec, words: Words, index: int, ctx: _Context, items: list[Item]) -> None:
    """`NAME VALUE` written to git's configuration (`git config alias.x '!cmd'`): git runs a
    code-running setting in every later git command, this call's or another's, so writing it
    is decided as running it, like `git -c NAME=VALUE`. `NAME` alone reads."""
    name, rest = words[index], words[index + 1 :]
    if not rest:
        return
    if name is None or rest[0] is None:
        items.append(Problem(f"{spec.name}: a setting that is an expansion", ctx.text))
        return
    if any(word is None or word[:1] == "-" for word in rest[1:]):
        # options may follow the name; one there could change which word is the value
        items.append(Problem(f"{spec.name}: an option after the setting's name", ctx.text))
        return
    scripts = setting_scripts(ctx.catalog.git_config, f"{name}={rest[0]}", False)
    if isinstance(scripts, str):
        items.append(Problem(scripts, ctx.text))
        return
    for script in scripts:
        items.extend(ctx.recurse(script, ctx.depth + 1))


def _payload(
    spec: CommandSpec, words: Words, found: Scan, ctx: _Context, items: list[Item]
) -> None:
    index = found.payload
    argv: Words = words[index:] if index is not None else ()
    if spec.assignments:
        k = 0
        while k < len(argv) and is_env_assignment(argv[k]):
            if rebinds(argv[k]):
                items.append(Problem(REBINDS, ctx.text))
            k += 1
        argv = argv[k:]
        if argv and argv[0] is None:
            items.append(
                Problem(f"{spec.name}: an assignment or command that is an expansion", ctx.text)
            )
            return
    named = {o.name for o in found.options}
    if not argv:
        if named & spec.shell_options:
            items.append(Problem(f"{spec.name} starts a shell that reads its input", ctx.text))
        elif spec.default_payload:
            _run_argv(spec, spec.default_payload, ctx, items, spec.screen)
        return
    if named & spec.shell_options and any("$" in (w or "$") for w in argv):
        # `sudo -s CMD` hands CMD to `$SHELL -c` with every character but `$` escaped
        items.append(
            Problem(f"{spec.name} -s/-i runs its command through a shell that expands $", ctx.text)
        )
        return
    replace = [
        o.value if o.value is not None else spec.replace[o.name]
        for o in found.options
        if o.name in spec.replace
    ]
    if replace:
        if "" in replace or None in replace:
            items.append(Problem(f"{spec.name}: a replace string that is an expansion", ctx.text))
            return
        # each input line is put in place of the string: a word holding it is unknown
        argv = tuple(None if w is None or any(r in w for r in replace) else w for w in argv)
    if spec.joined and not named & spec.argv_options:
        if None in argv:
            items.append(
                Problem(f"{spec.name}: a word that is an expansion in its command", ctx.text)
            )
            return
        script = " ".join(argv)  # type: ignore[arg-type]
        items.extend(_screen_if(spec.screen, ctx.recurse(script, ctx.depth + 1)))
        return
    _run_argv(spec, argv, ctx, items, spec.screen)


def _run_argv(
    spec: CommandSpec, argv: Words, ctx: _Context, items: list[Item], screen: bool
) -> None:
    inner = expand(argv, "", ctx.depth, ctx.recurse, ctx.catalog, ctx.nesting + 1)
    if spec.open_tail:
        inner = [
            i._replace(text=i.text + " ...", open_tail=True) if isinstance(i, Command) else i
            for i in inner
        ]
    items.extend(_screen_if(screen, inner))


def _shell_script(
    spec: CommandSpec, words: Words, found: Scan, ctx: _Context, items: list[Item]
) -> None:
    shell = words[0]
    if not any(o.name == spec.script_flag for o in found.options):
        items.append(Problem(f"{shell} runs a script from its input or a file", ctx.text))
        return
    if found.payload is None:
        items.append(Problem(f"{shell} -c without a script", ctx.text))
        return
    script = words[found.payload]
    if script is None:
        reason = f"{shell} -c with a script that is an expansion (not literal)"
        items.append(Problem(reason, ctx.text))
        return
    items.extend(ctx.recurse(script, ctx.depth + 1))


#: payloads a runner with unmodelled options may run (each later word may start one)
MAX_SCREENED = 64


def _any_word(
    spec: CommandSpec, words: Words, start: int, ctx: _Context, items: list[Item]
) -> None:
    """A runner whose options are not modelled (`systemd-run`, `valgrind`, ...): every later
    word that could be a command word starts a screened payload, and a word that sets a
    rebinding variable (`-E PATH=x`, `--setenv=LD_PRELOAD=x`) makes the line unanalysable.
    At most MAX_SCREENED payloads, each read once: linear in the words."""
    if any(map(_sets_rebinding_variable, words[start:])):
        items.append(Problem(REBINDS, ctx.text))
    starts = [k for k in range(start, len(words)) if (words[k] or "-")[:1] not in "-+"]
    for k in starts[:MAX_SCREENED]:
        first = words[k]
        spec_k = ctx.catalog.get(basename(first or ""))
        if spec_k is not None and spec_k.payload == "any-word":
            continue  # its own suffixes are among these already
        inner = expand(words[k:], "", ctx.depth, ctx.recurse, ctx.catalog, ctx.nesting + 1)
        items.extend(_screen_if(True, inner))


def _sets_rebinding_variable(word: str | None) -> bool:
    """A runner's word that sets an environment variable, as an option value or alone."""
    if word is None or "=" not in word:
        return False
    return rebinds(word.split("=", 1)[1] if word[:1] == "-" else word)


def _screen_if(screen: bool, items: list[Item]) -> list[Item]:
    if not screen:
        return items
    return [i._replace(screen=True) if isinstance(i, Command) else i for i in items]


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
