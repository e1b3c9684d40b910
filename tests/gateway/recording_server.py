"""A small MCP server for the gateway tests: a shell-like tool, a path tool, a URL tool and a
slow tool, each recording every call it receives (one JSON line in $RECORD_FILE), so a test
proves a refused call never reached it. Started as `python recording_server.py`."""

from __future__ import annotations

import json
import os
import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("recorder")


def _record(tool: str, arguments: dict[str, object]) -> None:
    with open(os.environ["RECORD_FILE"], "a", encoding="utf-8") as out:
        out.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")


@server.tool()
def exec(command: str) -> str:
    """Run a shell command (recorded, never run)."""
    _record("exec", {"command": command})
    return f"ran: {command}"


@server.tool()
def read_file(path: str) -> str:
    """Read a file (recorded)."""
    _record("read_file", {"path": path})
    return f"read: {path}"


@server.tool()
def fetch(url: str) -> str:
    """Fetch a URL (recorded)."""
    _record("fetch", {"url": url})
    return f"fetched: {url}"


@server.tool()
def sleep(seconds: float) -> str:
    """Sleep, then answer (recorded before sleeping)."""
    _record("sleep", {"seconds": seconds, "pid": os.getpid()})
    time.sleep(seconds)
    return "slept"


@server.tool()
def huge(size: int) -> str:
    """Answer with `size` characters."""
    _record("huge", {"size": size})
    return "x" * size


@server.tool()
def fail(message: str) -> str:
    """Answer the call with a protocol error whose message is `message` (recorded)."""
    from mcp.shared.exceptions import MCPError

    _record("fail", {"message": message})
    raise MCPError(code=-32000, message=message)


@server.resource("notes://secret")
def secret() -> str:
    """A resource the gateway blocks unless the server's switch passes it."""
    return "the secret"


@server.prompt()
def greet() -> str:
    """A prompt the gateway blocks unless the server's switch passes it."""
    return "hello"


if __name__ == "__main__":
    server.run()
