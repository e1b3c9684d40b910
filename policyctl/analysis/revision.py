"""`REV:path`: a policy as a git revision holds it, for `policyctl diff`.

Every file the compile reads (the policy, what it `extends`, its operator catalog and the
catalogs that extends) comes from the revision, through one `formats.read.Reader`; nothing of the
revision is read from the working tree, which the change under review controls. So:

- an argument of the form `REV:path` is always read from git: a file of that name in the
  working tree is never read instead (it would be a copy the pull request planted); to name
  such a file, write `./REV:path`. When both exist the argument is refused (PC317);
- paths (relative to the working directory, like a file's) are normalised on the text (`..`
  is applied to the path as written, not through the working tree's symlinks), and one that
  leaves the repository is refused (PC101);
- symlinks are followed inside the revision (`git cat-file --follow-symlinks`), never on disk;
- the revision is pinned to one tree before the first file is read.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ..api import compile_loaded
from ..compile.compiled import CompiledPolicy
from ..diagnostics import Diagnostic, PolicyError, Source
from ..document.extends import load_document
from ..formats.read import decode
from ..settings import Limits, default_limits

_GIT_TIMEOUT = 30


def is_revision_spec(spec: str) -> bool:
    """Whether `spec` has the `REV:path` form: a colon, and not written as a file path
    (`./x`, `../x`, an absolute path)."""
    if ":" not in spec or os.path.isabs(spec):
        return False
    return not spec.startswith(("./", "../", ".\\", "..\\"))


def load_revision(spec: str) -> CompiledPolicy:
    """A policy file, or `REV:path` for the file (and every file it reads) at a git revision."""
    if not is_revision_spec(spec):
        return compile_loaded(load_document(spec))
    rev, _, rel = spec.partition(":")
    # nothing from the command line may reach git as an option (`--output=FILE` writes a
    # file): a revision or path starting with "-" is refused, and git is told where its
    # options end
    if rev.startswith("-") or rel.startswith("-"):
        raise _error(
            f"{spec!r}: a revision or path may not start with '-' "
            "(write ./PATH for a file whose name starts with '-')"
        )
    if not rel:
        raise _error(f"{spec!r}: no path after the revision", f"write {rev}:PATH")
    reader = RevisionReader.open(spec, rev)
    if os.path.lexists(spec):
        raise PolicyError(
            [
                Diagnostic.make(
                    "PC317",
                    f"{spec} names both a file of the working tree and the file {rel} at git "
                    f"revision {rev}",
                    fix=f"write ./{spec} to compare the file, or rename it; {spec} is read "
                    "from the revision only when no such file exists",
                )
            ]
        )
    limits = default_limits()
    path = Path(rel)
    loaded = load_document(path, limits, reader=reader)
    return compile_loaded(loaded, limits, reader)


class RevisionReader:
    """A `formats.read.Reader` over one git tree: `reader(path)` is the text of `path` (relative to
    the working directory, as the loader builds it) in that tree."""

    def __init__(self, rev: str, tree: str, top: Path, cwd: Path, limits: Limits) -> None:
        self.rev = rev
        self.tree = tree
        self.top = top
        self.cwd = cwd
        self.limits = limits

    @classmethod
    def open(cls, spec: str, rev: str) -> RevisionReader:
        cwd = Path(os.getcwd())  # physical, like git's top level
        fix = f"write ./{spec} to name a file of the working tree"
        try:
            top = _git(["rev-parse", "--show-toplevel"], cwd).decode().strip()
        except _GitFailed as exc:
            raise _error(
                f"{spec}: no git repository here to read {rev} from ({exc})", fix
            ) from None
        try:
            tree = _git(
                ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{tree}}"], cwd
            )
        except _GitFailed:
            raise _error(f"{spec}: {rev} is not a git revision of {top}", fix) from None
        return cls(rev, tree.decode().strip(), Path(top), cwd, default_limits())

    def inside(self, path: Path) -> str:
        """`path` relative to the repository top, computed on the text: the working tree's
        symlinks are not the revision's. OSError when it leaves the repository."""
        full = os.path.normpath(os.path.join(self.cwd, path))
        inside = os.path.relpath(full, self.top)
        if inside == os.curdir or inside == os.pardir or inside.startswith(os.pardir + os.sep):
            raise FileNotFoundError(f"{self.rev}:{path} is outside the repository {self.top}")
        if "\n" in inside or "\r" in inside:
            raise FileNotFoundError(f"{self.rev}:{path}: a line break in a path is refused")
        return Path(inside).as_posix()

    def __call__(self, path: Path) -> str:
        inside = self.inside(path)
        name = f"{self.rev}:{inside}"
        # `--follow-symlinks` resolves a symlink of the revision inside the revision; one
        # pointing out of the repository, dangling or looping is reported, never followed
        header = _git(
            ["cat-file", "--batch-check", "--follow-symlinks"],
            self.top,
            f"{self.tree}:{inside}\n".encode(),
        )
        fields = header.decode("utf-8", "replace").split("\n", 1)[0].split()
        if len(fields) != 3 or fields[1] != "blob":
            raise FileNotFoundError(f"{name} {_not_a_blob(fields)}")
        oid, _, size = fields
        if int(size) > self.limits.max_file_bytes:
            raise PolicyError(
                [
                    Diagnostic.make(
                        "PC106",
                        f"{name} is larger than the limit of {self.limits.max_file_bytes} bytes",
                        Source(str(path), 1, 1),
                        fix="raise POLICYCTL_MAX_FILE_BYTES if this is intended",
                    )
                ]
            )
        raw = _git(["cat-file", "blob", oid], self.top)
        return decode(raw, str(path), self.limits)


def _not_a_blob(fields: list[str]) -> str:
    """Why `git cat-file --batch-check --follow-symlinks` answered with no file."""
    if fields[-1:] == ["missing"]:
        return "does not exist"
    if len(fields) == 3 and fields[1] == "tree":
        return "is a directory"
    if len(fields) == 2 and fields[0] in ("symlink", "dangling", "loop", "notdir"):
        return f"is a symlink that cannot be followed inside the revision ({fields[0]})"
    return "is not a file of the revision"


class _GitFailed(OSError):
    """git could not run or refused: the loader reports it as PC101 (cannot read)."""


def _git(args: list[str], cwd: Path, stdin: bytes | None = None) -> bytes:
    """git's standard output; `_GitFailed` (git's own message) when it fails."""
    try:
        out = subprocess.run(
            ["git", *args], cwd=cwd, input=stdin, capture_output=True, timeout=_GIT_TIMEOUT
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise _GitFailed(f"git {args[0]}: {exc}") from None
    if out.returncode != 0:
        message = out.stderr.decode("utf-8", "replace").strip()
        raise _GitFailed(message or f"git {args[0]} exited with {out.returncode}")
    return out.stdout


def _error(message: str, fix: str | None = None) -> PolicyError:
    return PolicyError([Diagnostic.make("PC101", message, fix=fix)])
