"""The reference file tools: decided again on the file they really open, when they open it.

The gate decided the path the model named. Between that decision and the open, a symlink on
the way can be swapped (time of check, time of use), so each tool decides again on what the
kernel actually opened:
- `read_file` and `list_dir` open the path (following symlinks, as the decision resolved them),
  then ask the kernel which file the descriptor is (`/proc/self/fd`), check it is inside the
  workspace, and decide that real path before reading a byte;
- `write_file` and `edit_file` open the path's existing folders one by one from the workspace
  down (each checked inside it by its real path), decide `<real folder>/<missing folders>/
  <name>` before anything is created or truncated, and then create the missing folders and open
  the name, each relative to its parent's descriptor with O_NOFOLLOW (a symlink put in the
  place of a new folder or of the name is refused).

A re-check is a call of the same tool with the real path (the other arguments unchanged). An
approval the gate obtained covers it when the real path is the path named; otherwise the
approver is asked about the real path.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import Any

from .callcheck import recheck
from .text import truncate
from .tools import RuntimeTool, tool


class WorkspaceError(PermissionError):
    pass


_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO never blocks the open
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)

#: the largest file `edit_file` reads into memory to change it
MAX_EDIT_BYTES = 32 * 1024 * 1024


def inside(workspace: Path, path: str) -> Path:
    """The named path, resolved, if it is inside the workspace (a first, early check)."""
    root = workspace.resolve()
    target = (root / path).resolve()
    if target != root and root not in target.parents:
        raise WorkspaceError(f"{path}: outside the workspace")
    return target


def fd_path(fd: int, named: str) -> str:
    """The real path of an open descriptor, as the kernel knows it.

    Linux: /proc/self/fd; macOS: F_GETPATH; elsewhere the real path of the name, accepted only
    if it is the same file (device and inode) as the descriptor."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        pass
    import fcntl

    getpath = getattr(fcntl, "F_GETPATH", None)
    if getpath is not None:  # pragma: no cover - macOS
        raw = fcntl.fcntl(fd, getpath, b"\0" * 1024)
        return bytes(raw).split(b"\0", 1)[0].decode()
    real = os.path.realpath(named)  # pragma: no cover - other systems
    opened, there = os.fstat(fd), os.stat(real)  # pragma: no cover
    if (opened.st_dev, opened.st_ino) != (there.st_dev, there.st_ino):  # pragma: no cover
        raise WorkspaceError(f"{named}: changed while it was opened")
    return real  # pragma: no cover


def _confined(root: Path, real: str, named: str) -> None:
    base = str(root)
    if real != base and not real.startswith(base.rstrip("/") + "/"):
        raise WorkspaceError(f"{named}: outside the workspace")


def _lexical(root: Path, named: str) -> str:
    return os.path.normpath(os.path.join(root, named))


async def _open_checked(
    root: Path, tool_name: str, args: dict[str, Any], flags: int
) -> tuple[int, str]:
    """Open `args["path"]` (following symlinks), then decide the file really opened."""
    named = args["path"]
    fd = os.open(root / named, flags | _CLOEXEC | _NONBLOCK)
    try:
        real = fd_path(fd, str(root / named))
        _confined(root, real, named)
        await recheck(
            tool_name, {**args, "path": real}, same_call=real == _lexical(root, named), what="open"
        )
    except BaseException:
        os.close(fd)
        raise
    return fd, real


def _walk_existing(root: Path, folders: list[str], named: str) -> tuple[int, list[str]]:
    """Open the folders of the path that exist, one by one from the workspace down, each
    checked inside the workspace by its real path; returns the deepest one's descriptor and
    the folders still missing."""
    current = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for i, part in enumerate(folders):
            try:
                deeper = os.open(part, os.O_RDONLY | _DIRECTORY | _CLOEXEC, dir_fd=current)
            except FileNotFoundError:
                return current, folders[i:]
            os.close(current)
            current = deeper
            _confined(root, fd_path(current, os.path.join(root, *folders[: i + 1])), named)
    except BaseException:
        os.close(current)
        raise
    return current, []


async def _open_in_folder(
    root: Path, tool_name: str, args: dict[str, Any], flags: int, *, make_folders: bool = False
) -> tuple[int, str]:
    """Decide `<real folder>/<name>` before anything is created or truncated, then create the
    missing folders (`make_folders`) and open the name, each relative to its parent's
    descriptor and with O_NOFOLLOW: no symlink is followed after the decision."""
    named = args["path"]
    lexical = Path(_lexical(root, named))
    if lexical == root or not lexical.name:
        raise IsADirectoryError(f"{named}: is a folder")
    try:
        *folders, name = lexical.relative_to(root).parts
    except ValueError:
        raise WorkspaceError(f"{named}: outside the workspace") from None
    current, missing = _walk_existing(root, folders, named)
    try:
        if missing and not make_folders:
            raise FileNotFoundError(f"{named}: no such folder")
        real = os.path.join(fd_path(current, str(lexical.parent)), *missing, name)
        _confined(root, real, named)
        await recheck(
            tool_name, {**args, "path": real}, same_call=real == str(lexical), what="open"
        )
        for part in missing:
            with contextlib.suppress(FileExistsError):  # made meanwhile: opened below, no follow
                os.mkdir(part, 0o777, dir_fd=current)
            deeper = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=current)
            os.close(current)
            current = deeper
        try:
            fd = os.open(name, flags | _CLOEXEC | _NOFOLLOW | _NONBLOCK, 0o666, dir_fd=current)
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a symlink in the name's place
                raise WorkspaceError(f"{named}: is a symlink") from None
            raise
    finally:
        os.close(current)
    return fd, real


def _regular(fd: int, named: str) -> None:
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        raise FileNotFoundError(f"{named}: not a regular file")


def _is_folder(name: str, folder: int) -> bool:
    try:
        return stat.S_ISDIR(os.stat(name, dir_fd=folder).st_mode)
    except OSError:  # a dangling symlink, or gone meanwhile
        return False


def _read_upto(fd: int, cap: int) -> bytes:
    """At most `cap + 1` bytes: one more than the cap says the file is larger (a file in the
    workspace may be huge, sparse, or growing while it is read)."""
    chunks = []
    left = cap + 1
    while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _read_for_model(fd: int, limit: int) -> str:
    """The file's text cut to about `limit` characters, head and tail, reading only those: a
    character is at most 4 bytes, so each end needs at most `4 * limit` of them."""
    edge = 4 * limit + 4
    data = _read_upto(fd, 2 * edge)
    if len(data) <= 2 * edge:
        return truncate(data.decode("utf-8", errors="replace"), limit)
    size = max(os.fstat(fd).st_size, len(data))
    head_chars = limit // 2
    head = data[:edge].decode("utf-8", errors="replace")[:head_chars]
    tail_bytes = os.pread(fd, edge, size - edge)
    tail = tail_bytes.decode("utf-8", errors="replace")[-(limit - head_chars) :]
    cut = size - len(head.encode("utf-8")) - len(tail.encode("utf-8"))
    return f"{head}\n... [about {cut} bytes cut] ...\n{tail}"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def make_file_tools(workspace: Path, output_limit: int) -> list[RuntimeTool]:
    root = workspace.resolve()

    @tool(read_only=True)
    async def read_file(path: str, max_chars: int = output_limit) -> str:
        """Read a text file of the workspace."""
        inside(root, path)
        if not (root / path).resolve().is_file():
            raise FileNotFoundError(f"{path}: no such file")
        fd, _ = await _open_checked(
            root, "read_file", {"path": path, "max_chars": max_chars}, os.O_RDONLY
        )
        try:
            _regular(fd, path)
            return _read_for_model(fd, min(max(1, max_chars), output_limit))
        finally:
            os.close(fd)

    @tool(read_only=True)
    async def list_dir(path: str = ".") -> list[str]:
        """List a folder of the workspace (folders end with /)."""
        target = inside(root, path)
        if not target.is_dir():
            raise NotADirectoryError(f"{path}: not a folder")
        fd, _ = await _open_checked(root, "list_dir", {"path": path}, os.O_RDONLY | _DIRECTORY)
        try:
            shown = [n + ("/" if _is_folder(n, fd) else "") for n in os.listdir(fd)]
        finally:
            os.close(fd)
        return sorted(shown)

    @tool()
    async def write_file(path: str, content: str) -> str:
        """Write a text file of the workspace (creating folders as needed)."""
        inside(root, path)
        if (root / path).is_symlink():
            raise WorkspaceError(f"{path}: is a symlink")
        args = {"path": path, "content": content}
        fd, _ = await _open_in_folder(
            root, "write_file", args, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, make_folders=True
        )
        try:
            _regular(fd, path)
            _write_all(fd, content.encode("utf-8"))
        finally:
            os.close(fd)
        return f"wrote {len(content)} characters to {path}"

    @tool()
    async def edit_file(path: str, old_text: str, new_text: str) -> str:
        """Replace one exact occurrence of old_text by new_text in a text file of the workspace."""
        inside(root, path)
        if not old_text:
            raise ValueError("old_text is empty")
        args = {"path": path, "old_text": old_text, "new_text": new_text}
        fd, _ = await _open_in_folder(root, "edit_file", args, os.O_RDWR)
        try:
            _regular(fd, path)
            raw = _read_upto(fd, MAX_EDIT_BYTES)
            if len(raw) > MAX_EDIT_BYTES:
                raise ValueError(f"{path}: larger than {MAX_EDIT_BYTES} bytes, too large to edit")
            text = raw.decode("utf-8")
            found = text.count(old_text)
            if found != 1:
                why = "not found" if found == 0 else f"found {found} times: give more context"
                raise ValueError(f"{path}: old_text {why}")
            os.lseek(fd, 0, os.SEEK_SET)
            os.ftruncate(fd, 0)
            _write_all(fd, text.replace(old_text, new_text).encode("utf-8"))
        finally:
            os.close(fd)
        return f"edited {path}"

    return [read_file, list_dir, write_file, edit_file]
