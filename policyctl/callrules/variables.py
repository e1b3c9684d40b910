"""Builtins and expansions that set a variable the analysis depends on (contract section 5).

`wrappers.rebinds` lists the variables that change which program a command name runs, or
what a program runs or loads (`PATH`, `IFS`, `LD_*`, ...). An assignment is one way to set
them; bash has more, and each one makes a line unanalysable here just as an assignment does
(the command's words are still decided, so deny rules meet them):

- builtins that store into a variable named by an argument: `read NAME` (`-a NAME` too),
  `printf -v NAME`, `mapfile`/`readarray NAME`, `getopts OPTSTRING NAME`, `wait -p NAME`;
- `unset NAME` (an unset `PATH` makes bash run `./git` for `git`), `export -n NAME` and
  `declare +x NAME` (the programs it starts no longer see it);
- `declare`/`typeset`/`local` of such a name, even without a value: inside a function it
  makes a new, unset variable;
- namerefs (`declare -n r=PATH`, then `r=/tmp/evil`): a nameref to such a name, to a name
  that is an expansion, or one declared without a target (its target comes later);
- a declaration or `unset` whose name is an expansion (`export $n` with `n=PATH=/x`);
- `set -k` (`set -o keyword`, `shopt -os keyword`): assignment words anywhere on a later
  command line become that command's environment (`git status PATH=/tmp/evil`);
- `for NAME in`, `select NAME in`, `${NAME:=value}`, `NAME[0]=value`.

`mapfile -C CALLBACK` runs a string as a command, and arithmetic (`$((...))`, `((...))`, `let`,
array subscripts, `[[ a -eq b ]]`, `${s:offset}`, assignments to a `declare -i` variable)
evaluates a variable's value as an expression, which can assign (`x=PATH=1; : $((x))`) and run
commands (`x='a[$(rm -rf ~)]'; : $((x))`): arithmetic over anything but numbers cannot be
analysed. So is a subscript in a variable *name* given to a builtin: `test -v NAME` (`[`,
`[[ -v ]]`), `printf -v NAME`, `read NAME`, `declare`/`typeset`/`local NAME`, `unset NAME`
and a nameref's target evaluate `a[$(rm -rf ~)]`'s subscript, and so running its command; a
name that is an expansion there (`test -v "$v"`) cannot be analysed either.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .wrappers import Words, rebinds

#: a declaration's argument: a word (None: an expansion) or an assignment (name, value)
DeclArg = str | None | tuple[str, str | None]

REBINDING = "sets a variable that changes what a command runs (PATH, IFS, LD_*, ...)"
ARITHMETIC = "arithmetic evaluates a variable's value as an expression (it can run commands)"
DECLARATIONS = frozenset({"declare", "typeset", "local", "export", "readonly"})
#: the simple commands `variable_problem` looks at
VARIABLE_BUILTINS = frozenset({"read", "printf", "mapfile", "readarray", "getopts", "unset"}) | {
    "let",
    "set",
    "wait",
    "shopt",
    "test",
    "[",
    *DECLARATIONS,
}
#: options that take a value: read -a -d -i -n -N -p -t -u; mapfile -d -n -O -s -u -C -c
_READ_VALUED = frozenset("adinNptu")
_MAPFILE_VALUED = frozenset("dnOsuCc")
#: `[[ a -eq b ]]`: these operators evaluate both sides as arithmetic
ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
#: special parameters that always hold a number
_NUMERIC_PARAMETERS = frozenset("#?$!")
#: a length expansion: a number whatever the variable holds
_LENGTH = re.compile(r"\$\{#[A-Za-z_][A-Za-z0-9_]*(\[[@*]\])?\}")


def rebinding_name(name: str | None) -> bool:
    """`PATH`, `PATH[0]`, `LD_PRELOAD`: a variable the analysis depends on (None: unknown)."""
    if name is None:
        return True
    return rebinds(name.split("[", 1)[0] + "=")


SUBSCRIPT_EVALUATED = "subscript is arithmetic (it can run commands)"
SUBSCRIPT = f"a variable name's {SUBSCRIPT_EVALUATED}"


def name_problem(name: str | None) -> str | None:
    """Why a variable name given to a builtin cannot be analysed: an expansion (its value could
    be `a[$(rm -rf ~)]`) or a subscript that is not a number (bash evaluates it), or None."""
    if name is None:
        return "a variable name that is an expansion (its subscript would be evaluated)"
    bracket = name.find("[")
    if bracket < 0:
        return None
    index = name[bracket + 1 :].removesuffix("]")
    if index in ("@", "*"):
        return None
    return SUBSCRIPT if arithmetic_problem(index) else None


def arithmetic_problem(expression: str | None) -> str | None:
    """Why an arithmetic expression cannot be analysed, or None when it holds only numbers
    and operators. A name (`i`, `PATH`) or an expansion (`$i`, `$(...)`) is evaluated as an
    expression in turn; `$#`, `$?`, `$$` and `$!` are always numbers."""
    if expression is None:
        return ARITHMETIC
    i, n = 0, len(expression)
    while i < n:
        ch = expression[i]
        if ch.isdigit():
            i += 1  # a number, also 0x1f and 16#ff: its letters are digits, not names
            while i < n and (expression[i].isalnum() or expression[i] in "#@_"):
                i += 1
            continue
        if ch.isalpha() or ch == "_":
            start = i
            while i < n and (expression[i].isalnum() or expression[i] == "_"):
                i += 1
            return f"arithmetic {REBINDING}" if rebinding_name(expression[start:i]) else ARITHMETIC
        if ch == "$":
            length = _LENGTH.match(expression, i)
            if length:
                i = length.end()  # `${#arr[@]}`, `${#s}`: always a number
                continue
            if expression[i + 1 : i + 2] not in _NUMERIC_PARAMETERS:
                return ARITHMETIC
            i += 2
            continue
        if ch == "`":
            return ARITHMETIC
        i += 1
    return None


def _options(
    words: Words, start: int, valued: frozenset[str]
) -> tuple[list[tuple[str, str | None]], int] | None:
    """Bash's builtin option syntax (`-rs`, `-a NAME`, `-aNAME`, `--`): the options with their
    values and the index of the first operand; None when an option word is an expansion."""
    found: list[tuple[str, str | None]] = []
    i = start
    while i < len(words):
        w = words[i]
        if w is None:
            return None  # `read $opt NAME`: could be `-a`
        if w == "--":
            return found, i + 1
        if len(w) < 2 or w[0] != "-":
            break
        k = 1
        while k < len(w):
            letter = w[k]
            if letter in valued:
                value = w[k + 1 :] or (words[i + 1] if i + 1 < len(words) else "")
                if not w[k + 1 :]:
                    i += 1
                found.append((letter, value))
                break
            found.append((letter, None))
            k += 1
        i += 1
    return found, i


def variable_problem(words: Words) -> str | None:
    """Why a builtin's words make the line unanalysable (`read PATH`), or None."""
    name = words[0]
    if name in DECLARATIONS:
        return declaration_problem(name, [_as_decl_arg(w) for w in words[1:]])
    if name == "read" or name in ("mapfile", "readarray"):
        is_read = name == "read"
        parsed = _options(words, 1, _READ_VALUED if is_read else _MAPFILE_VALUED)
        if parsed is None:
            return f"{name}: an option that is an expansion"
        options, rest = parsed
        if not is_read and any(letter == "C" for letter, _ in options):
            return "mapfile -C runs a string as a command"
        targets = [v for letter, v in options if letter == "a"] if is_read else []
        targets += list(words[rest:] if is_read else words[rest : rest + 1])
        if any(map(rebinding_name, targets)):
            return f"{name} {REBINDING}"
        return _first(f"{name}: ", map(name_problem, targets))
    if name == "printf":
        parsed = _options(words, 1, frozenset("v"))
        if parsed is None:
            # `printf "$f" x`: could be `-vNAME`; a single word cannot assign (no format)
            return (
                "printf: an option that is an expansion (it could be -v)"
                if len(words) > 2
                else None
            )
        targets = [v for letter, v in parsed[0] if letter == "v"]  # the last -v wins
        if any(map(rebinding_name, targets)):
            return f"printf -v {REBINDING}"
        return _first("printf -v: ", map(name_problem, targets))
    if name == "wait":  # `wait -n -p NAME`: the job's process id
        parsed = _options(words, 1, frozenset("p"))
        if parsed is None:
            return "wait: an option that is an expansion"
        targets = [v for letter, v in parsed[0] if letter == "p"]
        return f"wait -p {REBINDING}" if any(map(rebinding_name, targets)) else None
    if name == "getopts":
        rest = 2 if len(words) > 1 and words[1] == "--" else 1
        target = words[rest + 1] if rest + 1 < len(words) else ""
        return f"getopts {REBINDING}" if rebinding_name(target) else None
    if name == "unset":
        parsed = _options(words, 1, frozenset())
        if parsed is None:
            return "unset: an option that is an expansion"
        options, rest = parsed
        if any(letter == "f" for letter, _ in options):
            return None  # functions only
        if any(map(rebinding_name, words[rest:])):
            return f"unset {REBINDING}"
        return _first("unset: ", map(name_problem, words[rest:]))
    if name == "test" or name == "[":
        return condition_problem(words[1:-1] if name == "[" and words[-1] == "]" else words[1:])
    if name == "let":
        for expression in words[1:]:
            problem = arithmetic_problem(expression)
            if problem:
                return f"let: {problem}"
        return None
    if name == "set":
        return _set_problem(words)
    if name == "shopt":  # `shopt -os keyword` is `set -o keyword`
        parsed = _options(words, 1, frozenset())
        if parsed is None:
            return "shopt: an option that is an expansion"
        letters = {letter for letter, _ in parsed[0]}
        names = words[parsed[1] :]
        if {"o", "s"} <= letters and (None in names or "keyword" in names):
            return _KEYWORD
    return None


def _first(prefix: str, problems: Iterable[str | None]) -> str | None:
    problem = next((p for p in problems if p), None)
    return prefix + problem if problem else None


#: `test -v NAME` (a variable is set): NAME's subscript is evaluated (`-R` does not)
NAME_TESTS = frozenset({"-v"})
#: after these (or first) a test operand can be a unary operator
_TEST_JOINERS = frozenset({"!", "(", "-a", "-o"})
_TEST_BINARY = frozenset({"=", "==", "!=", "<", ">", "=~", "-a", "-o", "-nt", "-ot", "-ef"}) | {
    *ARITHMETIC_TESTS
}


def condition_problem(args: Words) -> str | None:
    """`test`/`[` arguments: a `-v` operand that cannot be analysed (`name_problem`), or an
    expansion where a unary operator can stand (`test $op "$v"`, `[ x -a $op "$v" ]`: it could
    be `-v`) before an operand that cannot be analysed either."""
    for k, word in enumerate(args[:-1]):
        operand = args[k + 1]
        if word in NAME_TESTS:
            problem = name_problem(operand)
            if problem:
                return f"test {word}: {problem}"
        elif (
            word is None
            and (k == 0 or args[k - 1] in _TEST_JOINERS)
            and operand not in _TEST_BINARY
            and name_problem(operand)
        ):
            return "test: an operator that is an expansion (it could be -v)"
    return None


_KEYWORD = "set -k (-o keyword) makes every assignment word on a line an environment assignment"


def _set_problem(words: Words) -> str | None:
    i = 1
    while i < len(words):
        w = words[i]
        if w is None:
            return "set: an option that is an expansion (it could be -k)"
        if w == "--" or w == "-" or w[:1] not in "-+" or len(w) < 2:
            return None
        if w[0] == "-" and "k" in w[1:]:
            return _KEYWORD
        if "o" in w[1:]:
            option = words[i + 1] if i + 1 < len(words) else ""
            if option is None or (w[0] == "-" and option == "keyword"):
                return _KEYWORD
            i += 1
        i += 1
    return None


def _as_decl_arg(word: str | None) -> DeclArg:
    """A declaration's word as reached through `command`/`builtin` (`builtin local x=1`)."""
    if word is None or "=" not in word or word[:1] in "-+":
        return word
    name, value = word.split("=", 1)
    return (name.removesuffix("+"), value)


QUOTED_COMPOUND = "a quoted compound assignment is parsed again (it can run commands)"


def declaration_problem(builtin: str, args: Sequence[DeclArg]) -> str | None:
    """`declare`, `typeset`, `local`, `export`, `readonly`: why the declaration makes the line
    unanalysable, or None. Assignments to rebinding names are reported by the caller's
    assignment check too; here are the other ways a declaration changes such a variable."""
    on: set[str] = set()
    off: set[str] = set()
    names: list[tuple[str | None, str | None, bool]] = []  # (name, value, has a value)
    for arg in args:
        if isinstance(arg, tuple):
            names.append((arg[0], arg[1], True))
        elif arg is None:
            return f"{builtin}: a name or option that is an expansion"
        elif arg[:1] in "-+" and len(arg) > 1 and not names:
            (on if arg[0] == "-" else off).update(arg[1:])
        else:
            names.append((arg, None, False))
    if on & {"f", "F", "p"} and not any(has for _, _, has in names):
        return None  # functions, or printing
    unexports = (builtin == "export" and "n" in on) or (builtin != "export" and "x" in off)
    for name, value, has_value in names:
        quoted = value if has_value else (name or "=").partition("=")[2] or None
        if quoted is not None and quoted.lstrip().startswith("("):
            # `declare -a 'a=($(rm x))'`: bash parses a quoted compound assignment again
            # (also without -a when the variable is an array already)
            return f"{builtin}: {QUOTED_COMPOUND}"
        # a nameref: every later assignment to it is one to its target
        if "n" in on and builtin != "export" and (not value or rebinding_name(value)):
            return f"{builtin} -n: a nameref whose target is unknown or {REBINDING[5:]}"
        if "n" in on and builtin != "export" and name_problem(value):
            return f"{builtin} -n: the nameref target's {SUBSCRIPT_EVALUATED}"
        # `declare 'a[$(rm -rf ~)]=1'`: a quoted assignment is a word holding the name
        problem = name_problem(name if has_value or name is None else name.split("=", 1)[0])
        if problem:
            return f"{builtin}: {problem}"
        if builtin == "export" and not unexports and not has_value:
            continue  # `export PATH`: its value is unchanged
        if builtin == "readonly" and not has_value:
            continue
        if rebinding_name(name):
            return f"{builtin} {REBINDING}"
        if "i" in on and builtin != "export":
            # an integer variable: this and every later assignment to it is arithmetic
            return f"{builtin} -i: {ARITHMETIC}"
    return None
