"""Path specifiers and call paths (contract section 6).

Patterns are gitignore patterns (pathspec's gitignore matcher, formerly named `gitwildmatch`).
A pattern without a slash matches at any depth, anywhere (`.env`, `*.pem`); `./x` and any
pattern with an inner slash (`src/*.py`) are anchored at the run's workspace; `~/x` at its
home; `/x` is absolute (unlike gitignore). A deny or ask pattern that matches a directory
matches everything under it; an allow pattern matches only the path itself, so allowing a file
or a directory never admits what lies inside.

A call's path is made absolute (against the call's working directory, else the workspace),
`..` removed, and symlinks resolved; `/proc/self/cwd` and the other links of a process's own
view resolve against the run, or leave the path unanalysable (`procfs`). A deny matches if
the normalised path or the real path matches; an allow needs both. Where the anchor is unknown
(no workspace in the context), deny and ask patterns anchored there match (fail closed) and
allow patterns do not.
"""

from __future__ import annotations

import os
import re
import stat
import weakref
from dataclasses import dataclass

from .model import Matcher, SpecifierError, SpecifierProblem
from .procfs import UnknownPath, real_path
from .values import Anchor, Part, ResolvedPath, Roots


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
        if self.anchor in ("workspace", "home"):
            base = part.roots.workspace if self.anchor == "workspace" else part.roots.home
            if base is None:
                return not strict  # unknown anchor: deny and ask match, allow does not
        normal, real = path.relative[self.anchor]
        first = normal is not None and self._match(normal, path.is_dir, strict)
        if real == normal:
            return first  # no symlink on the way (the common case): one match decides both
        if strict:
            return first and real is not None and self._match(real, path.is_dir, strict)
        return first or (real is not None and self._match(real, path.is_dir, strict))

    def _match(self, relative: str, is_dir: bool, itself_only: bool) -> bool:
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


#: compiled gitignore regexes by pattern text, while some compiled policy holds them: two
#: versions of a policy (diff, a hot reload) share their path patterns instead of compiling
#: each again (~30 us a pattern: 100,000 path rules were 6 s of a diff's 15)
_REGEXES: weakref.WeakValueDictionary[str, re.Pattern[str]] = weakref.WeakValueDictionary()


def _gitignore_regex(gitignore: str) -> re.Pattern[str] | None:
    found = _REGEXES.get(gitignore)
    if found is not None:
        return found
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern  # ~12 ms: on first use

    regex = GitIgnoreSpecPattern(gitignore).regex
    if regex is not None:
        _REGEXES[gitignore] = regex
    return regex


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
    try:
        regex = _gitignore_regex(gitignore)
    except (re.error, ValueError) as exc:  # `[0-.]` (re refuses the range), a trailing `\`
        reason = exc.msg if isinstance(exc, re.error) else "not a gitignore pattern"
        return fail(f'"{text}" is not a usable pattern: {reason}', at)
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
        # the real path is the kernel's view of what was written: symlinks first, then `..`
        # (`src/link/../x` is not `src/x` when `link` points elsewhere)
        real, is_dir = _real_path(joined, normal, roots, cwd or roots.workspace)
    except UnknownPath as exc:
        return f"the path cannot be resolved for the run: {exc}"
    except (OSError, ValueError) as exc:
        return f"the path cannot be resolved: {exc}"
    if real == normal:  # no symlink on the way: each anchor's pair is one path twice
        below = normal[1:]
        workspace = None if roots.workspace is None else _under(normal, roots.workspace)
        home = None if roots.home is None else _under(normal, roots.home)
        relative: dict[Anchor, tuple[str | None, str | None]] = {
            "anywhere": (below, below),
            "root": (below, below),
            "workspace": (workspace, workspace),
            "home": (home, home),
        }
        return ResolvedPath(normal, real, is_dir, relative)
    relative = {
        "anywhere": (normal[1:], real[1:]),
        "root": (normal[1:], real[1:]),
        "workspace": _pair(normal, real, roots.workspace),
        "home": _pair(normal, real, roots.home),
    }
    return ResolvedPath(normal, real, is_dir, relative)


def _real_path(joined: str, normal: str, roots: Roots, run_cwd: str | None) -> tuple[str, bool]:
    """Like os.path.realpath, but below an already resolved workspace or home only the
    components under it are looked at (one lstat each instead of one per component), and
    `/proc/self/cwd` and the like are the run's (`procfs`), not the deciding process's."""
    if "/../" not in joined + "/" and "/./" not in joined + "/":
        for base in (roots.workspace, roots.home):
            rest = _under(normal, base) if base else None
            if rest is None or base is None:
                continue
            current, st = base, None
            for i, name in enumerate(rest.split("/") if rest else ()):
                candidate = current + "/" + name
                try:
                    st = os.lstat(candidate)
                except FileNotFoundError:
                    remaining = "/".join(rest.split("/")[i:])
                    return current + "/" + remaining, False
                if stat.S_ISLNK(st.st_mode):
                    break
                current = candidate
            else:
                return current, st is None or stat.S_ISDIR(st.st_mode)
    real = real_path(joined, run_cwd)
    return real, os.path.isdir(real)


def _pair(normal: str, real: str, base: str | None) -> tuple[str | None, str | None]:
    if base is None:
        return (None, None)
    return (_under(normal, base), _under(real, base))
