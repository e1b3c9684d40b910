"""The paths a patch touches, for `apply_patch(...)` rules (argument kind `patch`).

Two formats are read: the apply_patch envelope (`*** Add File: p`, `*** Update File: p`,
`*** Delete File: p`, `*** Move to: p`) and unified diffs (`--- a/p`, `+++ b/p`,
`rename from`/`rename to`, `diff --git a/p b/q`). Every path is decided; a patch in which no
path can be found cannot be analysed.
"""

from __future__ import annotations

_ENVELOPE = ("*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:")
_DIFF = ("--- ", "+++ ", "rename from ", "rename to ", "copy from ", "copy to ")


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
            return (line[len(head) :].strip(),)
    if line.startswith("diff --git "):
        # binary and mode-only changes have no ---/+++ lines: the header is all there is
        words = line[len("diff --git ") :].split(" ")
        if len(words) != 2 or words[0][:2] != "a/" or words[1][:2] != "b/":
            return ("",)  # quoted or spaced names: refuse rather than guess
        return (words[0][2:], words[1][2:])
    for head in _DIFF:
        if line.startswith(head):
            path = line[len(head) :].split("\t", 1)[0].strip()
            if head in ("--- ", "+++ ") and path[:2] in ("a/", "b/"):
                path = path[2:]
            return (path,)
    return ()
