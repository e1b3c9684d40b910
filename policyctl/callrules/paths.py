"""Path specifiers and call paths (contract section 6).

Patterns are gitignore patterns (pathspec's gitignore matcher, formerly named `gitwildmatch`).
A pattern without a slash matches at any depth, anywhere (`.env`, `*.pem`); `./x` and any
pattern with an inner slash (`src/*.py`) are anchored at the run's workspace; `~/x` at its
home; `/x` is absolute (unlike gitignore). A deny or ask pattern that matches a directory
matches everything under it; an allow pattern matches only the path itself, so allowing a file
or a directory never admits what lies inside.

A call's path is made absolute (against the call's working directory, else the workspace),
`..` removed, and symlinks resolved. A deny matches if the normalised path or the real path
matches; an allow needs both. Where the anchor is unknown (no workspace in the context), deny
and ask patterns anchored there match (fail closed) and allow patterns do not.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from .model import Matcher, SpecifierError, SpecifierProblem

if TYPE_CHECKING:
    from .subject import Part

Anchor = Literal["anywhere", "workspace", "home", "root"]


@dataclass(frozen=True, slots=True)
class ResolvedPath:
    """`normal`: absolute, `..` removed; `real`: symlinks resolved too. Directories end in /."""

    normal: str
    real: str
    is_dir: bool


@dataclass(frozen=True, slots=True)
class Roots:
    workspace: str | None
    home: str | None


@dataclass(frozen=True, slots=True)
class PathPattern(Matcher):
    text: str
    anchor: Anchor
    #: the gitignore regex over the path relative to the anchor (None: the anchor itself)
    regex: re.Pattern[str] | None

    def matches(self, part: Part, strict: bool) -> bool:
        path = part.path
        if path is None:
            return False
        normal = self._match(path.normal, path.is_dir, part.roots, strict)
        if strict:
            return normal and self._match(path.real, path.is_dir, part.roots, strict)
        return normal or self._match(path.real, path.is_dir, part.roots, strict)

    def _match(self, absolute: str, is_dir: bool, roots: Roots, itself_only: bool) -> bool:
        if self.anchor in ("anywhere", "root"):
            relative = absolute[1:]
        else:
            base = roots.workspace if self.anchor == "workspace" else roots.home
            if base is None:
                return not itself_only  # unknown anchor: deny and ask match, allow does not
            under = _under(absolute, base)
            if under is None:
                return False
            relative = under
        if self.regex is None:  # `./`, `~/`, `/`: the anchor itself
            return relative == "" if itself_only else True
        if relative == "":
            return False
        regex = self.regex
        if not itself_only:
            return regex.match(relative + "/" if is_dir else relative) is not None
        if is_dir:
            # the directory itself: `docs/` and `docs` name it, `src/**` (what is inside) not
            whole = regex.match(relative)
            if whole is not None and whole.end() == len(relative):
                return True
            found = regex.match(relative + "/")
            return found is not None and _dir_slash(found) == len(relative)
        found = regex.match(relative)
        # a match through a parent directory (`x/` matching `x/y`) is not the path itself
        return found is not None and _dir_slash(found) < 0


def _dir_slash(found: re.Match[str]) -> int:
    """Where pathspec's directory group matched (-1: it did not take part)."""
    return found.start("ps_d") if "ps_d" in found.re.groupindex else -1


def _under(absolute: str, base: str) -> str | None:
    if absolute == base:
        return ""
    prefix = base if base.endswith("/") else base + "/"
    return absolute[len(prefix) :] if absolute.startswith(prefix) else None


def parse_path_pattern(spec: str, entry: str, offset: int) -> PathPattern:
    def fail(message: str, at: int = 0, fix: str | None = None) -> PathPattern:
        raise SpecifierError(SpecifierProblem("PC352", message, entry, offset + at, fix))

    text = spec.strip()
    at = spec.find(text[:1]) if text else 0
    if not text:
        return fail("empty path pattern", 0, 'use "tool" or "tool(*)"')
    if "\x00" in text or "\n" in text:
        return fail("a path pattern is one line of text", at)
    if text.startswith("!"):
        return fail("a negated pattern (!) has no meaning in a call rule", at, "use a deny entry")
    anchor: Anchor
    if text == "~" or text.startswith("~/"):
        anchor, rest = "home", text[2:]
    elif text.startswith("~"):
        return fail("~user paths are not supported", at, "write the absolute path")
    elif text.startswith("/"):
        anchor, rest = "root", text[1:]
    elif text == "." or text.startswith("./"):
        anchor, rest = "workspace", text[2:]
    elif "/" in text.rstrip("/"):
        anchor, rest = "workspace", text
    else:
        anchor, rest = "anywhere", text
    parts = rest.rstrip("/").split("/")
    if ".." in parts or "." in parts:
        return fail(f'"{text}" can never match: call paths are normalised', at, "remove . and ..")
    if not rest.strip("/"):
        return PathPattern(text, anchor, None)
    gitignore = rest if anchor == "anywhere" else "/" + rest.lstrip("/")
    regex = GitIgnoreSpecPattern(gitignore).regex
    if regex is None:
        return fail(f'"{text}" is not a usable pattern', at)
    return PathPattern(text, anchor, regex)


def resolve_path(raw: str, roots: Roots, cwd: str | None) -> ResolvedPath | str:
    """The call's path made absolute, `..` removed and symlinks resolved; or why it cannot be."""
    if not raw:
        return "the path is empty"
    if "\x00" in raw:
        return "the path contains a NUL character"
    if raw == "~" or raw.startswith("~/"):
        if roots.home is None:
            return "the path is under ~ but the run's home is not known"
        joined = roots.home + raw[1:]
    elif raw.startswith("~"):
        return "~user paths cannot be resolved"
    elif raw.startswith("/"):
        joined = raw
    else:
        base = cwd if cwd is not None else roots.workspace
        if base is None:
            return "the path is relative but the run's workspace is not known"
        joined = base + "/" + raw
    normal = os.path.normpath(joined)
    if normal.startswith("//"):
        normal = "/" + normal.lstrip("/")
    try:
        real = os.path.realpath(normal)
        is_dir = os.path.isdir(real)
    except (OSError, ValueError) as exc:
        return f"the path cannot be resolved: {exc}"
    return ResolvedPath(normal, real, is_dir)
