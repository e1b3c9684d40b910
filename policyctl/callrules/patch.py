"""The paths a patch touches, for `apply_patch(...)` rules (argument kind `patch`).

Two formats are read: the apply_patch envelope (`*** Add File: p`, `*** Update File: p`,
`*** Delete File: p`, `*** Move to: p`, each read after stripping the line's blanks, Unicode
blanks included, as Codex's apply_patch trims a hunk header before matching it) and unified
diffs (`--- a/p`, `+++ b/p`, `rename from`/`rename to`, `copy from`/`copy to`,
`diff --git a/p b/q`); a line ends at "\\n" only, as in both tools. Every path is
decided; a patch in which no path can be found cannot be analysed, nor one with a line that,
stripped, starts with `***` and is neither a header above nor a marker that names no file
(`*** Begin Patch`, `*** End Patch`, `*** End of File`, a row of `*`): `*** add file: p`,
`***  Add File: p` or a context diff's `*** p` may name a file to another reader.

A diff name in git's quoted form (`"b/\\056env"`) is decoded as git decodes it (C-style
escapes `\\a \\b \\t \\n \\v \\f \\r \\" \\\\` and three-digit octal bytes, read as UTF-8)
before `a/`/`b/` is stripped, so the path decided is the path written. A quoted name that
git would not decode (unknown escape, no closing quote, not UTF-8) and a quoted envelope
name cannot be analysed: fail closed.

What a patch does to each file (`patch_operations`) is read from the same lines: the envelope's
Add/Update/Delete headers, `*** Move to:` (the destination, and its Update File's path as the
source), a diff's `--- /dev/null` (the `+++` file is added) or `+++ /dev/null` (the `---` file
is deleted), `rename from`/`rename to` and `copy from`/`copy to`. Anything else a diff names,
a `diff --git` header's names included, is an update: a file changed in place.

A `diff --git A B` header is split as git splits it (`git_header_name` in git's apply.c): a
quoted name ends at its closing quote; an unquoted name never holds a `"` (git quotes such a
name), so a quote after a blank starts the second name; two unquoted names are the two words,
or, when a name holds a blank, the two equal halves `a/N b/N`. Both names are decided. A header
that cannot be split that way (renamed names with blanks, text after the second quoted name,
an unquoted name with `"` or a backslash, names without `a/`/`b/`) cannot be analysed.
"""

from __future__ import annotations

#: Codex's markers, each with its blank: the name is the rest of the stripped line, as written
#: (`*** Add File:  src/x` writes ` src/x`); `*** Add File:x` is no header there, and refused
_ENVELOPE = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")
_MARKERS = frozenset({"*** Begin Patch", "*** End Patch", "*** End of File"})  # no path
#: `rename old`/`rename new`: git still reads the older spellings of the rename lines
_DIFF = (
    "--- ", "+++ ", "rename from ", "rename to ", "copy from ", "copy to ", "rename old ",
    "rename new ",
)  # fmt: skip
_STRIPPED = ("--- ", "+++ ")  # the heads whose names carry git's a/ and b/ prefixes
_ESCAPES = {
    "a": 7,
    "b": 8,
    "t": 9,
    "n": 10,
    "v": 11,
    "f": 12,
    "r": 13,
    '"': 34,
    "\\": 92,
}
_OCTAL = "01234567"


#: what the head of a line does to the file it names (heads not listed: an update)
_OPERATION = {
    "*** Add File: ": "add",
    "*** Delete File: ": "delete",
    "*** Move to: ": "move_to",
    "rename from ": "move_from",
    "rename old ": "move_from",
    "rename to ": "move_to",
    "rename new ": "move_to",
    "copy from ": "copy_from",
    "copy to ": "copy_to",
}
DEV_NULL = "/dev/null"


def patch_operations(text: str) -> tuple[tuple[str, str], ...] | str:
    """(operation, path) for each file the patch touches, in order and without repeats, or
    why none could be found. Operations: add, update, delete, move_from, move_to, copy_from,
    copy_to (a path may have several: an updated file that is also moved)."""
    found: dict[tuple[str, str], None] = {}  # ordered, without repeats
    previous: tuple[str, tuple[str, ...]] = ("", ())  # the last naming line: head, its paths
    for line in text.split("\n"):
        line = line.removesuffix("\r")
        paths = _paths_of(line)
        if paths is None:
            return f"a patch line looks like an envelope header but is none: {line[:60]!r}"
        if not paths:  # most lines of a patch: its hunks
            continue
        if "" in paths:
            return f"a patch line names no path: {line[:60]!r}"
        head = _head(line)
        operation = _OPERATION.get(head, "update")
        if head == "+++ " and previous[0] == "--- ":
            if previous[1] == (DEV_NULL,):
                operation = "add"
            elif paths == (DEV_NULL,):  # `--- a/p` then `+++ /dev/null`: p is deleted
                old, new = ("update", previous[1][0]), ("delete", previous[1][0])
                if old in found and new not in found:
                    found = {(new if k == old else k): None for k in found}
        if head == "*** Move to: " and previous[0] == "*** Update File: ":
            found.setdefault(("move_from", previous[1][0]))
        for path in paths:
            if path != DEV_NULL:
                found.setdefault((operation, path))
        previous = (head, paths)
    return tuple(found) if found else "the patch names no file"


def patch_paths(text: str) -> tuple[str, ...] | str:
    """The paths, in order and without repeats, or why none could be found."""
    operations = patch_operations(text)
    if isinstance(operations, str):
        return operations
    return tuple(dict.fromkeys(path for _, path in operations))


def _head(line: str) -> str:
    """The head of a line that names files (`_paths_of` read the names after it)."""
    stripped = line.strip()
    if stripped.startswith("***"):
        return next((h for h in _ENVELOPE if stripped.startswith(h)), "")
    if line.startswith("diff --git "):
        return "diff --git "
    return next((h for h in _DIFF if line.startswith(h)), "")


def _paths_of(line: str) -> tuple[str, ...] | None:
    """The paths `line` names ("" for a name that cannot be read), or None for a line that
    looks like an envelope header and is none."""
    stripped = line.strip()  # str.strip drops every blank Rust's trim() drops, and more
    if stripped.startswith("***"):
        for head in _ENVELOPE:
            if stripped.startswith(head):
                name = stripped[len(head) :]
                return ("",) if name.lstrip().startswith('"') else (name,)  # quoted: refused
        if stripped in _MARKERS or stripped.strip("*") == "":
            return ()
        return None
    if line.startswith("diff --git "):
        # binary and mode-only changes have no ---/+++ lines: the header is all there is
        names = _header_names(line[len("diff --git ") :])
        if names is None or names[0][:2] != "a/" or names[1][:2] != "b/":
            return ("",)  # refuse rather than guess
        return (names[0][2:], names[1][2:])
    for head in _DIFF:
        if line.startswith(head):
            rest = line[len(head) :]
            if rest.startswith('"'):
                quoted = _unquote(rest)
                path = "" if quoted is None else quoted[0]
            else:
                path = rest.split("\t", 1)[0].strip()
            if head in _STRIPPED and path[:2] in ("a/", "b/"):
                path = path[2:]
            return (path,)
    return ()


_BLANKS = " \t"


def _header_names(rest: str) -> tuple[str, str] | None:
    """The two names of a `diff --git` header, with their a/ and b/, or None."""
    if rest.startswith('"'):
        first = _unquote(rest)
        if first is None or first[1][:1] not in _BLANKS:
            return None
        name, rest = first[0], first[1].lstrip(_BLANKS)
        if rest.startswith('"'):
            second = _unquote(rest)
            if second is None or second[1]:
                return None  # text after the second name
            return name, second[0]
        return (name, rest) if _written_by_git(rest) else None
    quote = rest.find('"')
    if quote != -1:
        # the first name is unquoted: the quote starts the second, after one blank
        if quote < 2 or rest[quote - 1] not in _BLANKS:
            return None
        second = _unquote(rest[quote:])
        name = rest[: quote - 1]
        if second is None or second[1] or not _written_by_git(name):
            return None
        return name, second[0]
    words = rest.replace("\t", " ").split(" ")
    if len(words) == 2:
        pair = (words[0], words[1])
    else:
        half = len(rest) // 2  # `a/N b/N`, N with blanks: the only split into equal names
        if not (len(rest) % 2 and rest[half] in _BLANKS and rest[2:half] == rest[half + 3 :]):
            return None
        pair = (rest[:half], rest[half + 1 :])
    return pair if all(map(_written_by_git, pair)) else None


def _written_by_git(unquoted: str) -> bool:
    """git quotes a name that holds a quote or a backslash: an unquoted one with either is
    not a name git wrote, and other tools may read it otherwise."""
    return unquoted != "" and '"' not in unquoted and "\\" not in unquoted


def _unquote(text: str) -> tuple[str, str] | None:
    """Decode the git-quoted name `text` starts with: (name, the rest), or None."""
    out = bytearray()
    i = 1
    while i < len(text):
        char = text[i]
        if char == '"':
            try:
                return out.decode("utf-8"), text[i + 1 :]
            except UnicodeDecodeError:
                return None
        if char != "\\":
            out += char.encode("utf-8")
            i += 1
            continue
        code = text[i + 1 : i + 2]
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            i += 2
        elif code != "" and code in "0123":
            digits = text[i + 1 : i + 4]
            if len(digits) != 3 or any(d not in _OCTAL for d in digits):
                return None
            out.append(int(digits, 8))
            i += 4
        else:
            return None  # git refuses an unknown escape: so do we
    return None  # no closing quote
