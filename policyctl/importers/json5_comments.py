"""The comments of a JSON5 text and the key path each belongs to (`policyctl import`).

json5 parsers drop comments, and an OpenClaw config is often documented in them. This scanner
reads only the structure (brackets, keys, commas, strings) and ties each comment to a path:
a comment on the line of a value belongs to that value, a comment on lines of its own to the
key or item that follows it, and one before a closing bracket to the container it closes.
The text is assumed to be valid JSON5 already (it was parsed first); the scanner only needs
to keep its place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Path = tuple[str | int, ...]

_PUNCT = "{}[]:,"


@dataclass(frozen=True, slots=True)
class Comment:
    text: str  # without the `//` or `/* */` markers, one string per line
    line: int
    path: Path
    trailing: bool  # on the line of the value it belongs to


@dataclass
class _Frame:
    kind: str  # "{" or "["
    path: Path
    key: str | None = None  # object: the key whose value comes next / came last
    index: int = -1  # array: the item being read
    expect_key: bool = True


@dataclass
class _Scanner:
    text: str
    max_depth: int | None = None
    too_deep_at: int | None = None  # the line where nesting first passed max_depth
    pos: int = 0
    line: int = 1
    stack: list[_Frame] = field(default_factory=list)
    comments: list[Comment] = field(default_factory=list)
    pending: list[tuple[str, int]] = field(default_factory=list)
    last_path: Path | None = None  # the value most recently completed
    last_line: int = 0
    #: where each key (or array item) is written: 1-based line and column, first one kept
    positions: dict[Path, tuple[int, int]] = field(default_factory=dict)
    #: a key written twice in one object (the parser keeps the later value): path, where again
    repeated: list[tuple[Path, tuple[int, int]]] = field(default_factory=list)

    def here(self, path: Path) -> None:
        if path not in self.positions:
            column = self.pos - self.text.rfind("\n", 0, self.pos)
            self.positions[path] = (self.line, column)

    def flush_pending(self, path: Path) -> None:
        for text, line in self.pending:
            self.comments.append(Comment(text, line, path, trailing=False))
        self.pending.clear()

    def comment(self, text: str, line: int) -> None:
        if self.last_path is not None and line == self.last_line:
            self.comments.append(Comment(text, line, self.last_path, trailing=True))
        else:
            self.pending.append((text, line))

    def value_path(self) -> Path:
        if not self.stack:
            return ()
        top = self.stack[-1]
        if top.kind == "{":
            return (*top.path, top.key or "")
        return (*top.path, top.index)

    def begin_value(self) -> Path:
        """A value starts here (scalar or container): attach waiting comments to it."""
        in_array = bool(self.stack) and self.stack[-1].kind == "["
        if in_array:
            self.stack[-1].index += 1
        path = self.value_path()
        if in_array:
            self.here(path)
        self.flush_pending(path)
        return path

    def end_value(self, path: Path) -> None:
        self.last_path, self.last_line = path, self.line

    def scan(self) -> list[Comment]:
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch == "\n":
                self.line += 1
                self.pos += 1
            elif ch.isspace():
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                end = len(text) if end < 0 else end
                self.comment(text[self.pos + 2 : end].strip(), self.line)
                self.pos = end
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                end = len(text) if end < 0 else end
                body = text[self.pos + 2 : end]
                start_line = self.line
                for part in body.splitlines() or [""]:
                    cleaned = part.strip().lstrip("*").strip()
                    if cleaned:
                        self.comment(cleaned, start_line)
                self.line += body.count("\n")
                self.pos = end + 2
            elif ch in "{[":
                path = self.begin_value()
                self.stack.append(_Frame(ch, path))
                if self.max_depth is not None and len(self.stack) > self.max_depth:
                    self.too_deep_at = self.line
                    return self.comments
                self.last_path = None
                self.pos += 1
            elif ch in "}]":
                if not self.stack:
                    break  # unbalanced: not valid JSON5, which the parser reports
                frame = self.stack.pop()
                self.flush_pending(frame.path)
                self.end_value(frame.path)
                self.pos += 1
            elif ch == ":":
                if self.stack:
                    self.stack[-1].expect_key = False
                self.pos += 1
            elif ch == ",":
                if self.stack and self.stack[-1].kind == "{":
                    self.stack[-1].expect_key = True
                self.pos += 1
            else:
                top = self.stack[-1] if self.stack else None
                start = (self.line, self.pos)
                token = self.read_token()
                if top is not None and top.kind == "{" and top.expect_key:
                    top.key = token
                    line, pos = start
                    key_path = (*top.path, token)
                    at = (line, pos - self.text.rfind("\n", 0, pos))
                    if key_path not in self.positions:
                        self.positions[key_path] = at
                    else:
                        self.repeated.append((key_path, at))
                    self.flush_pending((*top.path, token))
                    self.last_path = None
                else:
                    self.end_value(self.begin_value())
        self.flush_pending(())
        return self.comments

    def read_token(self) -> str:
        """A string (its value, escapes kept simple) or a bare word (identifier, number)."""
        text = self.text
        quote = text[self.pos]
        if quote in "\"'":
            out: list[str] = []
            i = self.pos + 1
            while i < len(text) and text[i] != quote:
                if text[i] == "\\" and i + 1 < len(text):
                    nxt = text[i + 1]
                    if nxt == "\n":
                        self.line += 1
                    else:
                        out.append({"n": "\n", "t": "\t"}.get(nxt, nxt))
                    i += 2
                    continue
                out.append(text[i])
                i += 1
            self.pos = i + 1
            return "".join(out)
        start = self.pos
        while (
            self.pos < len(text)
            and not text[self.pos].isspace()
            and text[self.pos] not in _PUNCT
            and not text.startswith("//", self.pos)
            and not text.startswith("/*", self.pos)
        ):
            self.pos += 1
        return text[start : self.pos]


def json5_comments(text: str) -> list[Comment]:
    """Every comment of a (valid) JSON5 text, with the path it belongs to, in text order."""
    return _Scanner(text).scan()


def json5_positions(
    text: str,
) -> tuple[dict[Path, tuple[int, int]], list[tuple[Path, tuple[int, int]]]]:
    """Where each key and array item of a (valid) JSON5 text is written (line, column), and
    each key written again in the same object (with where it is written again)."""
    scanner = _Scanner(text)
    scanner.scan()
    return scanner.positions, scanner.repeated


def nesting_too_deep(text: str, max_depth: int) -> int | None:
    """The line where the text nests deeper than `max_depth`, or None. Checked before the
    json5 parser runs: it is recursive and would overflow the stack on a hostile file."""
    scanner = _Scanner(text, max_depth)
    scanner.scan()
    return scanner.too_deep_at
