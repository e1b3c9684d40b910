"""Reference tools for demos and tests, kept small and safe (nanobot's names).

Files are confined to a workspace: a path that resolves outside it, through `..` or through a
symlink, is refused. `exec` takes an argument vector (no shell), a timeout, a minimal
environment, and keeps the head and tail of long output.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from .tools import RuntimeTool, tool

OUTPUT_LIMIT = 10_000


class WorkspaceError(PermissionError):
    pass


def _inside(workspace: Path, path: str) -> Path:
    root = workspace.resolve()
    target = (root / path).resolve()
    if target != root and root not in target.parents:
        raise WorkspaceError(f"{path}: outside the workspace")
    return target


def truncate(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """Keep the head and the tail of long output; say how much was cut."""
    if len(text) <= limit:
        return text
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n... [{cut} characters cut] ...\n{text[-half:]}"


def make_builtin_tools(workspace: str | Path, *, exec_timeout: float = 30.0) -> list[RuntimeTool]:
    ws = Path(workspace)

    @tool(read_only=True)
    async def read_file(path: str, max_chars: int = OUTPUT_LIMIT) -> str:
        """Read a text file of the workspace."""
        target = _inside(ws, path)
        if not target.is_file():
            raise FileNotFoundError(f"{path}: no such file")
        return truncate(target.read_text(encoding="utf-8", errors="replace"), max(1, max_chars))

    @tool(read_only=True)
    async def list_dir(path: str = ".") -> list[str]:
        """List a folder of the workspace (folders end with /)."""
        target = _inside(ws, path)
        if not target.is_dir():
            raise NotADirectoryError(f"{path}: not a folder")
        return sorted(p.name + ("/" if p.is_dir() else "") for p in target.iterdir())

    @tool()
    async def write_file(path: str, content: str) -> str:
        """Write a text file of the workspace (creating folders as needed)."""
        target = _inside(ws, path)
        if target.is_symlink():
            raise WorkspaceError(f"{path}: is a symlink")
        target.parent.mkdir(parents=True, exist_ok=True)
        _inside(ws, str(target.parent.relative_to(ws.resolve())))  # a symlinked folder
        target.write_text(content, encoding="utf-8")
        return f"wrote {len(content)} characters to {path}"

    @tool(
        exclusive=True,
        parameters={
            "type": "object",
            "properties": {
                "command": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "timeout": {"type": "number", "minimum": 0.1, "maximum": 600},
            },
            "required": ["command"],
            "additionalProperties": False,
        },
    )
    async def exec(command: list[str], timeout: float = exec_timeout) -> dict[str, object]:
        """Run a program in the workspace: an argument vector, no shell."""
        if not command:
            raise ValueError("command is empty")
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(ws.resolve()), "LANG": "C.UTF-8"}
        proc = await asyncio.create_subprocess_exec(
            *command,
            cwd=ws.resolve(),
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), timeout)
        except asyncio.TimeoutError:
            proc.kill()
            await proc.wait()
            raise TimeoutError(f"timed out after {timeout} s") from None
        return {
            "exit_code": proc.returncode,
            "output": truncate(out.decode("utf-8", errors="replace")),
        }

    return [read_file, list_dir, write_file, exec]
