"""Shell analysis: a command line -> every simple command, file access and unanalysable part.

The line is parsed with tree-sitter's Bash grammar (the parser Gemini CLI uses), and the
syntax tree is walked iteratively (a deeply nested line cannot exhaust Python's stack), so
every simple command counts wherever it stands: lists, pipelines, subshells, groups, loops,
conditionals, function bodies, `$(...)`, backticks, `<(...)`/`>(...)`, heredoc bodies and
arithmetic. Words are quote-removed here; `commands.py` strips wrappers and finds payloads.

What cannot be analysed is reported, never guessed: a parse error (also an unterminated quote
or heredoc), a line over the size limit (64 KiB) or over the parse-time limit, scripts nested
deeper than the depth limit, and whatever `commands.py` refuses (`eval`, `source`, ...).
The commands that did parse are still reported, so deny rules meet them.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..catalog.commands import CommandCatalog, builtin_commands
from .commands import (
    REBINDS,
    Access,
    Command,
    DirectoryChange,
    Item,
    Problem,
    expand,
)
from .shell_words import join_continued_lines, plain_word, word_value
from .variables import (
    ARITHMETIC_TESTS,
    NAME_TESTS,
    REBINDING,
    DeclArg,
    arithmetic_problem,
    declaration_problem,
    name_problem,
    rebinding_name,
    variable_problem,
)
from .wrappers import rebinds

if TYPE_CHECKING:
    from tree_sitter import Node, Parser


@dataclass(frozen=True, slots=True)
class ShellLimits:
    max_bytes: int = 64 * 1024
    #: for the whole line: nested `sh -c` scripts, heredocs and backticks share it
    parse_seconds: float = 0.25
    max_depth: int = 8
    #: the command catalog the words are read with (None: the shipped one)
    commands: CommandCatalog | None = None


DEFAULT_LIMITS = ShellLimits()


@dataclass(frozen=True, slots=True)
class ShellAnalysis:
    commands: tuple[Command, ...]
    accesses: tuple[Access, ...]
    problems: tuple[Problem, ...]
    #: the line changes directory (`cd`, `pushd`, `env -C`): relative targets are unknown
    changes_directory: bool

    @property
    def analysable(self) -> bool:
        return not self.problems


_local = threading.local()
_language: Any = None


class _Kinds:
    """The grammar's node kinds the walker tests, as sets of numeric ids.

    `node.kind_id` is an int; `node.type` builds a new string on every access, and the walker
    asks it of every node. Every id whose name is one of ours is included (a grammar may
    have several symbols of one name), named kinds only: the walker only meets named nodes.
    """

    def __init__(self, language: Any) -> None:
        ids: dict[str, set[int]] = {}
        for kind_id in range(language.node_kind_count):
            if language.node_kind_is_named(kind_id):
                ids.setdefault(language.node_kind_for_id(kind_id), set()).add(kind_id)

        def of(*names: str) -> frozenset[int]:
            return frozenset(i for name in names for i in ids.get(name, ()))

        self.leaves = of(*_LEAVES)
        self.heredoc_parts = of(*_HEREDOC)
        self.redirected_statement = of("redirected_statement")
        self.command = of("command")
        self.declaration = of("declaration_command", "unset_command")
        self.file_redirect = of("file_redirect")
        self.command_substitution = of("command_substitution")
        self.heredoc_redirect = of("heredoc_redirect")
        self.variable_assignment = of("variable_assignment")
        self.redirects = of("file_redirect", "heredoc_redirect", "herestring_redirect")
        self.command_name = of("command_name")
        self.word = of("word")
        self.for_statement = of("for_statement")  # also `select`
        self.expansion = of("expansion")
        self.subscript = of("subscript")
        #: evaluated as arithmetic as a whole (`((...))` is a compound_statement, like `{ }`)
        self.arithmetic = of("arithmetic_expansion", "compound_statement", "c_style_for_statement")
        self.binary_expression = of("binary_expression")
        self.unary_expression = of("unary_expression")
        self.array = of("array")
        self.body = of("do_group", "compound_statement")
        #: the nodes `_Walker.variables` looks at: one set test on the common path
        self.variables = (
            self.for_statement
            | self.expansion
            | self.subscript
            | self.arithmetic
            | self.binary_expression
            | self.unary_expression
            | self.array
        )


_kinds: _Kinds | None = None


def _node_kinds() -> _Kinds:
    global _kinds
    if _kinds is None:
        _parser()
        _kinds = _Kinds(_language)
    return _kinds


def _parser() -> Parser:
    """One parser per thread (tree-sitter parsers are not thread-safe); imported on first use."""
    parser: Parser | None = getattr(_local, "parser", None)
    if parser is None:
        global _language
        import tree_sitter_bash
        from tree_sitter import Language, Parser

        if _language is None:
            _language = Language(tree_sitter_bash.language())
        parser = Parser(_language)
        _local.parser = parser
    return parser


_BEYOND_PLANE_2 = re.compile("[\U00030000-\U0010ffff]")
_CHUNKED_ABOVE = 4096  # smaller lines parse in microseconds; larger ones are parsed in chunks


def _parse(source: bytes, deadline: float) -> Node | None:
    """The syntax tree, or None when the deadline (for the whole line, nested scripts
    included) passes first."""
    if time.monotonic() > deadline:
        return None
    parser = _parser()
    if len(source) <= _CHUNKED_ABOVE:
        return parser.parse(source).root_node

    def read(offset: int, _point: object) -> bytes:
        return source[offset : offset + _CHUNKED_ABOVE]

    def progress(_offset: int, _has_error: bool) -> bool:
        return time.monotonic() > deadline  # True cancels the parse

    try:
        tree = parser.parse(read, progress_callback=progress)
    except ValueError:  # cancelled by `progress`
        tree = None
    if tree is None:
        parser.reset()  # a cancelled parse would otherwise resume on the next call
        return None
    return tree.root_node


def analyse(script: str, limits: ShellLimits = DEFAULT_LIMITS) -> ShellAnalysis:
    items = _analyse(script, 0, limits, time.monotonic() + limits.parse_seconds)
    commands = tuple(i for i in items if isinstance(i, Command))
    problems = tuple(i for i in items if isinstance(i, Problem))
    moves = any(isinstance(i, DirectoryChange) for i in items)
    accesses = tuple(i for i in items if isinstance(i, Access))
    return ShellAnalysis(commands, accesses, problems, moves)


def _analyse(script: str, depth: int, limits: ShellLimits, deadline: float) -> list[Item]:
    shown = script if len(script) <= 80 else script[:77] + "..."
    if depth > limits.max_depth:
        return [Problem(f"scripts nested deeper than {limits.max_depth} levels", shown)]
    if "\x00" in script:
        return [Problem("the command contains a NUL character", shown)]
    if _BEYOND_PLANE_2.search(script):
        # tree-sitter-bash 0.25 reads out of bounds (and can crash the process) on such code
        # points after `{`; planes 3-16 are rare scripts, tags and private use: refuse them
        return [Problem("the command contains characters beyond U+2FFFF", shown)]
    try:
        source = script.encode("utf-8")
    except UnicodeEncodeError:
        return [Problem("the command is not valid text", shown)]
    if len(source) > limits.max_bytes:
        return [Problem(f"the command is longer than {limits.max_bytes} bytes", shown)]
    text = script
    if b"\\\n" in source:
        text = join_continued_lines(script)
        source = text.encode("utf-8")
    root = _parse(source, deadline)
    if root is None:
        return [Problem(f"parsing took longer than {limits.parse_seconds} s", shown)]
    walker = _Walker(source, text, depth, limits, deadline)
    if root.has_error:
        walker.items.append(Problem("the shell parser did not accept the line", _first_error(root)))
        walker.items.extend(_screen_rejected(source, depth, limits, deadline))
    walker.walk(root)
    return walker.items


def _screen_rejected(source: bytes, depth: int, limits: ShellLimits, deadline: float) -> list[Item]:
    """A line the grammar rejects is unanalysable, but what bash would run on it must still meet
    the deny rules (contract section 5): the grammar stops at `cat <<EOF; rm x` and reads
    ``echo `#`; rm x`` as a comment. The line is parsed once more with `<<` blanked and `#` made `:`
    (same length, so the grammar reads on instead of giving up), and the commands found are
    screened: checked against deny and ask rules only. This can only make the call stricter:
    the line stays unanalysable, so nothing found here is allowed by it."""
    lenient = source.replace(b"<<", b"  ").replace(b"#", b":")
    if lenient == source and b"<>" not in source:
        return []
    if b"<>" not in lenient:
        return _screened(lenient, depth, limits, deadline, "")
    # `<>` (open for reading and writing) is not in the grammar: read once as `<`, once as `>`
    reads = _screened(lenient.replace(b"<>", b"< "), depth, limits, deadline, "read")
    writes = _screened(lenient.replace(b"<>", b"> "), depth, limits, deadline, "write")
    return reads + writes


def _screened(
    lenient: bytes, depth: int, limits: ShellLimits, deadline: float, mode: str
) -> list[Item]:
    """The commands of a leniently re-read line, screened, and its file accesses of `mode`
    (none when empty): an access is decided by the read or write rules in full, which can
    only make the unanalysable line stricter."""
    root = _parse(lenient, deadline)
    if root is None:
        return []
    walker = _Walker(lenient, lenient.decode("utf-8"), depth + 1, limits, deadline)
    walker.walk(root)
    return [
        i._replace(screen=True) if isinstance(i, Command) else i
        for i in walker.items
        if isinstance(i, Command) or (isinstance(i, Access) and i.mode == mode)
    ]


def _first_error(root: Node) -> str:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            col = node.start_point[1] + 1
            line = node.start_point[0] + 1
            what = f"missing {node.type}" if node.is_missing else "unexpected text"
            return f"{what} at line {line}, column {col}"
        stack.extend(reversed(node.children))
    return "the line"


#: node types that never contain a command: not descended into (a third of a line's nodes)
_LEAVES = frozenset(
    {
        "word",
        "number",
        "raw_string",
        "ansi_c_string",
        "variable_name",
        "simple_expansion",
        "string_content",
        "file_descriptor",
        "heredoc_start",
        "heredoc_end",
        "heredoc_content",
        "special_variable_name",
        "comment",
        "test_operator",
        "regex",
    }
)
_UNQUOTED = ("word", "concatenation")
#: characters that make a word's value differ from its text
_EXPANDS = re.compile(r"[$`\\'\"]")
_UNESCAPED_SPACE = re.compile(r"(?<!\\)\s")
_HEREDOC = frozenset({"heredoc_start", "heredoc_body", "heredoc_end"})
_REDIRECT_WRITE = {">", ">>", "&>", "&>>", ">|", ">&", "&>|"}
_REDIRECT_READ = {"<", "<&"}
_NOT_A_FILE = {"/dev/null"}


#: an unquoted word bash reads as an assignment when it comes before the command word
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
#: an unquoted word with nothing to remove or expand and no blank: its value is its text
_PLAIN_WORD = re.compile(r"[^\\*?\[{\s]*")


class _Walker:
    def __init__(
        self, source: bytes, text: str, depth: int, limits: ShellLimits, deadline: float
    ) -> None:
        self.deadline = deadline
        self.source = source
        #: the line as text when its byte offsets are character offsets (ASCII): a node's
        #: text is then a slice, without decoding
        self.ascii = text if len(text) == len(source) else None
        self.kinds = _node_kinds()
        self.depth = depth
        self.limits = limits
        self.items: list[Item] = []
        self.catalog = limits.commands or builtin_commands()
        #: redirections whose extra words were taken as arguments of the command they follow
        self.absorbed: set[int] = set()
        self.extra: dict[int, tuple[Node, ...]] = {}

    def text(self, node: Node) -> str:
        if self.ascii is not None:
            return self.ascii[node.start_byte : node.end_byte]
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def walk(self, root: Node) -> None:
        kinds = self.kinds
        leaves = kinds.leaves
        stack = [root]
        pop, push = stack.pop, stack.append
        visited = 0
        while stack:
            visited += 1
            if not visited & 1023 and time.monotonic() > self.deadline:
                # walking shares the parse's time limit: a line costs at most that, whatever
                # its shape (the commands found so far are still decided)
                self.items.append(
                    Problem(f"analysis took longer than {self.limits.parse_seconds} s", "the line")
                )
                return
            node = pop()
            kind = node.kind_id
            if kind in kinds.command:
                # only the parts that can hold a command are descended into
                inside = self.command(node, self.extra.pop(node.id, ()) if self.extra else ())
                inside.reverse()
                stack.extend(inside)
                continue
            if kind in kinds.redirected_statement:
                self.absorb(node)
            elif kind in kinds.declaration:
                self.declaration(node)
            elif kind in kinds.variable_assignment:
                # `PATH=/tmp/evil git status`, `PATH=/tmp/evil; git status`, `export PATH=...`
                name = node.child_by_field_name("name")
                if name is not None and rebinding_name(self.text(name)):  # also `PATH[0]=`
                    self.items.append(Problem(REBINDS, self.text(node)))
            elif kind in kinds.variables:
                self.variables(node)
            elif kind in kinds.file_redirect:
                self.redirect(node)
            elif kind in kinds.command_substitution and self.nested_backticks(node):
                continue
            elif kind in kinds.heredoc_redirect:
                self.heredoc(node)
                # the rest of the line hangs here too (`cat <<EOF | rm x`); the body is done
                for child in reversed(node.named_children):
                    if child.kind_id not in kinds.heredoc_parts:
                        push(child)
                continue
            for child in reversed(node.named_children):
                if child.kind_id not in leaves:
                    push(child)

    def nested_backticks(self, node: Node) -> bool:
        """Inside backticks bash turns \\` into ` first, so `` `echo \\`rm x\\`` `` runs
        `rm x`; the grammar keeps the escapes as words. Such a body is unescaped and analysed
        again (True: done, do not descend)."""
        text = self.text(node)
        if not text.startswith("`") or "\\" not in text:
            return False
        inner = re.sub(r"\\([\\`$])", r"\1", text[1:-1] if text.endswith("`") else text[1:])
        self.items.extend(_analyse(inner, self.depth + 1, self.limits, self.deadline))
        return True

    def heredoc(self, node: Node) -> None:
        """An unquoted heredoc's body is expanded like a double-quoted string. The grammar
        misses `$(...)` on indented lines, so the body is analysed again as one."""
        start = body = None
        for child in node.named_children:
            if child.type == "heredoc_start":
                start = child
            elif child.type == "heredoc_body":
                body = child
        if start is None or body is None:
            return
        if "$" in self.text(start):
            # bash ends `<<$'EOF'` (or `<<$"EOF"`) at a line `EOF`, its quote-removed word;
            # the grammar waits for the literal `$'EOF'`, so what it calls the body may hold
            # commands bash runs: the line cannot be analysed
            reason = "a here-document delimiter quoted with $'...' or $\"...\""
            self.items.append(Problem(reason, self.text(node)))
            return
        if any(q in self.text(start) for q in "'\"\\"):
            return  # <<'EOF': the body is literal text
        text = self.text(body)
        if "$" not in text and "`" not in text:
            return
        quoted = ': "' + _as_double_quoted(text) + '"'
        found = _analyse(quoted, self.depth + 1, self.limits, self.deadline)
        if found and isinstance(found[0], Command) and found[0].words[:1] == (":",):
            found = found[1:]  # the `:` that carried the string
        self.items.extend(found)

    def absorb(self, node: Node) -> None:
        """`echo hi > out more`: the grammar hangs `more` on the redirection; bash gives it to
        the command. Such words become the command's arguments."""
        body = node.child_by_field_name("body")
        if body is None or body.type != "command":
            return
        extra: list[Node] = []
        for child in node.named_children:
            if child.type == "file_redirect":
                targets = [c for c in child.named_children if c.type != "file_descriptor"]
                extra.extend(targets[1:])
                self.absorbed.add(child.id)
        if extra:
            self.extra[body.id] = tuple(extra)

    def recurse(self, script: str, depth: int) -> list[Item]:
        return _analyse(script, depth, self.limits, self.deadline)

    def command(self, node: Node, extra: tuple[Node, ...] = ()) -> list[Node]:
        """Decide-ready words of one simple command; returns the children to descend into."""
        kinds = self.kinds
        ascii = self.ascii
        words: list[str | None] = []
        inside: list[Node] = []
        children = node.named_children
        if extra:
            children = [*children, *extra]
        for child in children:
            kind = child.kind_id
            if kind in kinds.variable_assignment and not words:
                inside.append(child)  # VAR=$(cmd) before the command word: not a word
                continue
            if kind in kinds.redirects:
                inside.append(child)
                continue
            if kind in kinds.command_name:
                inner = child.named_children
                if not inner:
                    continue
                child = inner[0]
                kind = child.kind_id
            if kind in kinds.word:
                # slice our own text: a chunk-parsed tree does not hold it
                if ascii is not None:
                    raw = ascii[child.start_byte : child.end_byte]
                else:
                    raw = self.source[child.start_byte : child.end_byte].decode("utf-8", "replace")
                if not words and _ASSIGNMENT.match(raw):
                    # bash assigns `_=1` and `_+=1` before `rm x`; the grammar takes them for
                    # the command word, which would hide `rm` from every rule
                    if rebinds(raw):
                        self.items.append(Problem(REBINDS, raw))
                    continue
                if _PLAIN_WORD.fullmatch(raw):
                    words.append(raw)  # the common case: nothing to remove, no blank
                    continue
                if _UNESCAPED_SPACE.search(raw):
                    # an unquoted word never holds a blank: the grammar misread the line
                    # (`time { { a; }; }` yields a word `{ {`)
                    self.items.append(Problem("a word the parser misread", raw))
                words.append(plain_word(raw))
                continue
            words.append(word_value(child, self.source))
            if kind not in kinds.leaves:
                inside.append(child)
        if words:
            self.items.extend(expand(tuple(words), "", self.depth, self.recurse, self.catalog))
        return inside

    def declaration(self, node: Node) -> None:
        """`export A=1`, `local x`, `unset f`: commands in their own right."""
        builtin = node.children[0].type
        words: list[str | None] = [builtin]
        args: list[DeclArg] = []
        for child in node.named_children:
            if child.type == "variable_assignment":
                words.append(self.assignment(child))
                name = child.child_by_field_name("name")
                value = child.child_by_field_name("value")
                args.append(
                    (
                        "" if name is None else self.text(name),
                        "" if value is None else word_value(value, self.source),
                    )
                )
            else:
                words.append(word_value(child, self.source))
                args.append(words[-1])
        self.items.append(Command(tuple(words), self.text(node)))
        if builtin == "unset_command" or builtin == "unset":
            problem = variable_problem(tuple(words))
        else:
            problem = declaration_problem(builtin, args)
        if problem:
            self.items.append(Problem(problem, self.text(node)))

    def variables(self, node: Node) -> None:
        """`for PATH in`, `${PATH:=x}`, subscripts, arithmetic and `[[ a -eq b ]]`: the ways
        of setting a variable that are syntax, not builtins (`variables.py`)."""
        kinds = self.kinds
        kind = node.kind_id
        problem: str | None = None
        if kind in kinds.for_statement:
            variable = node.child_by_field_name("variable")
            if variable is not None and rebinding_name(self.text(variable)):
                problem = f"the loop {REBINDING}"
        elif kind in kinds.expansion:
            problem = self.expansion(node)
            self.operand_substitutions(node)
        elif kind in kinds.subscript:
            index = node.child_by_field_name("index")
            if index is not None and self.text(index) not in ("@", "*"):
                problem = arithmetic_problem(self.text(index))
        elif kind in kinds.binary_expression:
            self.operand_substitutions(node)  # `[[ x =~ `cmd` ]]`: the regex is kept as text
            operator = node.child_by_field_name("operator")
            if operator is not None and self.text(operator) in ARITHMETIC_TESTS:
                for side in ("left", "right"):
                    operand = node.child_by_field_name(side)
                    if operand is not None:
                        problem = problem or arithmetic_problem(word_value(operand, self.source))
        elif kind in kinds.unary_expression:
            problem = self.name_test(node)
        elif kind in kinds.array:
            problem = self.array_keys(node)
        elif self.source[node.start_byte : node.start_byte + 1] != b"{":
            # `$((...))`, `((...))`, `for ((...))` (a `{ ...; }` group is no arithmetic)
            for child in node.named_children:
                if child.kind_id not in kinds.body:
                    problem = problem or arithmetic_problem(self.text(child))
        if problem:
            self.items.append(Problem(problem, self.text(node)))

    def operand_substitutions(self, node: Node) -> None:
        """`${x:-`rm x`}`, `${x#$(rm x)}`: the grammar keeps such an operand as one word (or
        pattern) with no node for the substitution in it, yet bash runs it. An operand that
        holds a backquote, `$(` or `$[` makes the line unanalysable, and what it would run is
        found by analysing the operand as a double-quoted string (bash expands a `'...'`
        operand inside `"${...}"` too) and screened: deny and ask rules still meet it."""
        for child in node.named_children:
            if child.kind_id not in self.kinds.leaves:
                continue  # a nested `${...}`, `$(...)` or string: walked as itself
            text = self.text(child)
            if not _SUBSTITUTION.search(_ESCAPED.sub("", text)):
                continue
            if not _double_quoted(node) and not _SUBSTITUTION.search(
                _SINGLE_QUOTED.sub("", _ESCAPED.sub("", text))
            ):
                continue  # `${x:-'$(c)'}`, `[[ x =~ '`c`' ]]` unquoted: quotes make it literal
            self.items.append(Problem(HIDDEN_SUBSTITUTION, self.text(node)))
            found = _analyse(
                ': "' + _as_double_quoted(text) + '"', self.depth + 1, self.limits, self.deadline
            )
            if found and isinstance(found[0], Command) and found[0].words[:1] == (":",):
                found = found[1:]  # the `:` that carried the string
            self.items.extend(
                i._replace(screen=True) if isinstance(i, Command) else i for i in found
            )

    def name_test(self, node: Node) -> str | None:
        """`[[ -v NAME ]]` (and `[ -v NAME ]`, which the grammar reads alike): bash evaluates
        NAME's subscript."""
        operator = node.child_by_field_name("operator")
        if operator is None or self.text(operator) not in NAME_TESTS:
            return None
        operand = next((c for c in node.named_children if c.id != operator.id), None)
        if operand is None:
            return None
        name = word_value(operand, self.source)
        raw = self.text(operand)
        if name is None and operand.type in _UNQUOTED and not _EXPANDS.search(raw):
            name = raw  # `[[ -v a[@] ]]`: `[[` does not glob
        problem = name_problem(name)
        return f"{self.text(operator)}: {problem}" if problem else None

    def array_keys(self, node: Node) -> str | None:
        """`a=([x]=1)`: a key in a compound assignment is a subscript, evaluated as arithmetic
        like `a[x]=1` (also for an associative array, fail closed: policyctl does not follow
        `declare -A`)."""
        for element in node.named_children:
            text = self.text(element)
            close = text.find("]")
            # `[k]=v` and `[k]+=v` are keys; `[abc]*.txt` is a glob
            if text[:1] == "[" and close > 0 and text[close + 1 :].startswith(("=", "+=")):
                problem = arithmetic_problem(text[1:close])
                if problem:
                    return f"a compound assignment's key: {problem}"
        return None

    def expansion(self, node: Node) -> str | None:
        """`${PATH:=x}` assigns when PATH is unset or empty; `${s:i:n}` is arithmetic;
        `${x@P}` expands `x`'s value as a prompt (running its `$(...)`); `${!x}` uses `x`'s
        value as a variable name (evaluating its subscript)."""
        children = node.children
        problem = _indirection_problem(children)
        if problem:
            return problem
        for k, child in enumerate(children):
            if child.is_named:
                continue
            if child.type == "@" and k + 1 < len(children) and children[k + 1].type == "P":
                return PROMPT_EXPANSION
            if child.type in (":=", "="):
                name = next((c for c in children if c.type == "variable_name"), None)
                if name is not None and rebinding_name(self.text(name)):
                    return f"${{NAME:=...}} {REBINDING}"
            elif child.type == ":":
                for part in children[k + 1 :]:
                    if part.is_named:
                        problem = arithmetic_problem(self.text(part))
                        if problem:
                            return problem
                return None
        return None

    def assignment(self, node: Node) -> str | None:
        """`a=1` as a word (`export a=1`); None when the value is an expansion."""
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is None:
            return None
        if value is None:
            return self.text(name) + "="
        text = word_value(value, self.source)
        return None if text is None else f"{self.text(name)}={text}"

    def redirect(self, node: Node) -> None:
        operator = ""
        targets: list[Node] = []
        for child in node.children:
            if child.type == "file_descriptor":
                continue
            if not child.is_named:
                operator = operator or child.type
            else:
                targets.append(child)
        if not targets:
            return  # `>&-` closes a descriptor
        if len(targets) > 1 and node.id not in self.absorbed:
            self.items.append(Problem("words after a redirection target", self.text(node)))
        target = targets[0]
        if operator in (">&", "<&") and (target.type == "number" or self.text(target) == "-"):
            return  # descriptor duplication: 2>&1
        if operator in _REDIRECT_WRITE:
            mode = "write"
        elif operator in _REDIRECT_READ:
            mode = "read"
        else:
            self.items.append(Problem(f"redirection {operator!r}", self.text(node)))
            return
        path = word_value(target, self.source)
        if path in _NOT_A_FILE:
            return
        self.items.append(Access(mode, path, self.text(node)))  # type: ignore[arg-type]


HIDDEN_SUBSTITUTION = "a command substitution in an operand the parser kept as text"
#: what runs a command inside a word bash expands (escaped pairs such as \` are dropped first)
_SUBSTITUTION = re.compile(r"`|\$[(\[]")
_ESCAPED = re.compile(r"\\.", re.S)
_SINGLE_QUOTED = re.compile(r"'[^']*'")
PROMPT_EXPANSION = "${x@P} expands a value as a prompt (it can run commands)"
INDIRECTION = "${!x} uses a value as a variable name (its subscript can run commands)"


def _indirection_problem(children: list[Node]) -> str | None:
    """`${!x}`, `${!a[0]}` are indirect; `${!prefix*}`, `${!prefix@}` and `${!a[@]}` list
    names or keys and evaluate nothing."""
    if len(children) < 3 or children[1].type != "!" or children[2].type == "}":
        return None  # `${!}` is the last background job's process id
    target = children[2]
    if target.type == "subscript":
        index = target.child_by_field_name("index")
        if index is not None and index.text in (b"@", b"*") and len(children) == 4:
            return None
    elif (
        target.type == "variable_name"
        and len(children) == 5
        and children[3].type in ("*", "@")
        and children[4].type == "}"
    ):
        return None
    return INDIRECTION


def _double_quoted(expansion: Node) -> bool:
    """Whether a `${...}` (or the one it is nested in) stands inside double quotes, where a
    `'` in its operand is a plain character."""
    parent = expansion.parent
    while parent is not None and parent.type == "expansion":
        parent = parent.parent
    return parent is not None and parent.type == "string"


def _as_double_quoted(body: str) -> str:
    """A heredoc body as the inside of a double-quoted string: `"` is literal in a body, so it
    is escaped, and so is a backslash before it (`\\"` in a body is two characters)."""
    out: list[str] = []
    for i, ch in enumerate(body):
        if ch == '"':
            out.append('\\"')
        elif ch == "\\" and body[i + 1 : i + 2] == '"':
            out.append("\\\\")
        else:
            out.append(ch)
    return "".join(out)
