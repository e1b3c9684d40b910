"""Plain command lines analysed without the parser: words joined by `&&`, `||`, `|`, `;`, `&`.

Most lines an agent runs look like `git status && npm run test | tail -n 5`. When a line holds
only ASCII letters, digits, spaces and `_-./=,:@%+` between those operators, bash has nothing
to do but split it: no quotes, escapes, expansions, globs, braces, tildes, comments,
redirections, subshells or newlines can occur. Its simple commands are the text between the
operators and their words are the text between the spaces, so the parse tree would add
nothing but its cost (about two thirds of deciding such a line).

Anything beyond that shape is left to the parser (`plain_items` returns None): an empty
command (`a && && b`, a leading operator), a reserved or declaration word in command position
(`if`, `time`, `export`, ...), a leading word with `=` that is not an assignment, and the
shapes tree-sitter-bash reads differently from bash (a `==` word, a command word beyond
letters, digits and `_./-`, an empty or unusual assignment value): there the parser's reading
stands, so no decision changes. A property test checks that both paths give the same analysis
for every line accepted here.
"""

from __future__ import annotations

import re

from .commands import Item, Recurse, expand

_PLAIN_LINE = re.compile(r"[A-Za-z0-9 _\-./=,:@%+&|;]*")
#: bash's list and pipeline operators, longest first
_OPERATOR = re.compile(r"(&&|\|\||\|&|[|;&])")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=[A-Za-z0-9_./-]+")
#: the command words the grammar reads as bash does (it misreads `- A=1 x`, `git@x`, `a%b`,
#: `m+:i`, `s:-` and others in command position)
_COMMAND_WORD = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./-]*")
#: words the grammar gives a structure of its own in command position: left to the parser
_PARSER_WORDS = frozenset(
    {"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case"}
    | {"esac", "select", "function", "in", "time", "coproc"}
    | {"export", "declare", "local", "readonly", "typeset", "unset", "unsetenv"}
)


def plain_items(script: str, depth: int, recurse: Recurse) -> list[Item] | None:
    """The line's commands as the shell stage would report them; None: not a plain line."""
    if not _PLAIN_LINE.fullmatch(script) or "==" in script:
        return None  # the grammar drops or refuses a `==` word (`x == y` is `x y` to it)
    pieces = _OPERATOR.split(script)
    last = len(pieces) - 1
    items: list[Item] = []
    for index in range(0, len(pieces), 2):
        words = pieces[index].split()
        if not words:
            # only `a;` and `a &` may end with nothing after the operator
            if index == last and index > 0 and pieces[index - 1] in (";", "&"):
                break
            return None
        start = 0
        while start < len(words) and "=" in words[start]:
            if not _ASSIGNMENT.fullmatch(words[start]):
                return None  # `1a=b`, `=x`, `x=`: left to the parser
            start += 1
        if start == len(words):
            continue  # assignments only
        first = words[start]
        if first in _PARSER_WORDS or not _COMMAND_WORD.fullmatch(first):
            return None
        items.extend(expand(tuple(words[start:]), "", depth, recurse))
    return items
