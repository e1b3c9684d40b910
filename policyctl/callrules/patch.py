"""The paths a patch touches, for `apply_patch(...)` rules (argument kind `patch`).

Two formats are read: the apply_patch envelope (`*** Add File: p`, `*** Update File: p`,
`*** Delete File: p`, `*** Move to: p`) and unified diffs (`--- a/p`, `+++ b/p`,
`rename from`/`rename to`, `copy from`/`copy to`, `diff --git a/p b/q`). Every path is
decided; a patch in which no path can be found cannot be analysed.

A diff name in git's quoted form (`"b/\\056env"`) is decoded as git decodes it (C-style
escapes `\\a \\b \\t \\n \\v \\f \\r \\" \\\\` and three-digit octal bytes, read as UTF-8)
before `a/`/`b/` is stripped, so the path decided is the path written. A quoted name that
git would not decode (unknown escape, no closing quote, not UTF-8), a quoted or escaped name
on a `diff --git` header and a quoted envelope name cannot be analysed: fail closed.
"""

from __future__ import annotations

_ENVELOPE = ("*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:")
_DIFF = ("--- ", "+++ ", "rename from ", "rename to ", "copy from ", "copy to ")
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


def patch_paths(text: str) -> tuple[str, ...] | str:
    """The paths, in order and without repeats, or why none could be found."""
    found: list[str] = []
    for line in text.splitlines():
        for path in _paths_of(line):
            if path == "":
                return f"a patch line names no path: {line[:60]!r}"
            if path != "/dev/null" and path not in found:
                found.append(path)
    return tuple(found) if found else "the patch names no file"


def _paths_of(line: str) -> tuple[str, ...]:
    for head in _ENVELOPE:
        if line.startswith(head):
            name = line[len(head) :].strip()
            return ("",) if name.startswith('"') else (name,)  # quoted: not read, refused
    if line.startswith("diff --git "):
        # binary and mode-only changes have no ---/+++ lines: the header is all there is
        words = line[len("diff --git ") :].split(" ")
        if len(words) != 2 or words[0][:2] != "a/" or words[1][:2] != "b/":
            return ("",)  # quoted or spaced names: refuse rather than guess
        if any('"' in w or "\\" in w for w in words):
            return ("",)
        return (words[0][2:], words[1][2:])
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
