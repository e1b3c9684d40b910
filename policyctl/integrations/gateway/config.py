"""The gateway's files: the upstream servers (`mcpServers`) and the HTTP listener's clients.

Both are operator files: a mistake is a `GatewayConfigError` naming the file, the entry and
the fix, never a traceback and never a server silently left out.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...context import RunContext
from ...names import mcp_server_part, mcp_server_problem

#: the most a servers or clients file may hold; both are a few hundred bytes in practice
MAX_FILE_BYTES = 1024 * 1024
#: a bearer token shorter than this is guessable: refused
MIN_TOKEN_CHARS = 16
PASS, BLOCK = "pass", "block"


class GatewayConfigError(Exception):
    """A servers, clients or token file the gateway cannot use; the message says why and
    what to change (`code` is the diagnostic)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """One upstream server: a command to start (stdio) or a URL (streamable HTTP)."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    #: whether the server's resources and prompts reach clients (`policyctl` key of the entry)
    resources: str = BLOCK
    prompts: str = BLOCK


def _read_json(path: str, code: str) -> Any:
    try:
        raw = Path(path).read_bytes()[: MAX_FILE_BYTES + 1]
    except OSError as exc:
        raise GatewayConfigError(code, f"{path} cannot be read: {exc.strerror}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise GatewayConfigError(code, f"{path} is larger than {MAX_FILE_BYTES} bytes")
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise GatewayConfigError(code, f"{path}: not UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        where = f"{path}:{exc.lineno}:{exc.colno}"
        raise GatewayConfigError(code, f"{where}: not JSON: {exc.msg}") from None


def _strings(value: Any, where: str, what: str) -> Any:
    if what == "list":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise GatewayConfigError("PC500", f"{where} must be a list of strings")
        return tuple(value)
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise GatewayConfigError("PC500", f"{where} must be an object of strings")
    return dict(value)


def load_servers(path: str) -> list[ServerSpec]:
    """The servers of a `{"mcpServers": {name: {command, args, env} | {url, headers}}}` file,
    in the file's order (which decides the `-2` suffixes of colliding tool names)."""
    data = _read_json(path, "PC500")
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict) or not servers:
        raise GatewayConfigError(
            "PC500", f'{path}: expected {{"mcpServers": {{NAME: {{"command": ...}}}}}}'
        )
    out: list[ServerSpec] = []
    #: each server's `<server>` part of its tools' names, as rules match it
    parts: dict[str, str] = {}
    for name, entry in servers.items():
        where = f"{path}: mcpServers.{name}"
        problem = mcp_server_problem(name)
        if problem:
            raise GatewayConfigError("PC500", f"{where}: the name {problem}; rename the server")
        other = parts.setdefault(mcp_server_part(name), name)
        if other != name:
            # one prefix for two servers: `gh__x` would name the first one's `x` while it is
            # up and the second one's while it is down, moving rules between them
            raise GatewayConfigError(
                "PC500",
                f"{where}: its tools get the same tool names as those of {other!r} "
                f"(`{mcp_server_part(name)}__...`); rename one of the servers",
            )
        if not isinstance(entry, dict):
            raise GatewayConfigError("PC500", f"{where} must be an object")
        known = {"command", "args", "env", "cwd", "url", "headers", "type", "policyctl"}
        unknown = sorted(set(entry) - known)
        if unknown:
            raise GatewayConfigError(
                "PC500", f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(known))})"
            )
        command, url = entry.get("command"), entry.get("url")
        if (command is None) == (url is None):
            raise GatewayConfigError(
                "PC500", f'{where}: give either "command" (stdio) or "url" (streamable HTTP)'
            )
        switches = entry.get("policyctl", {})
        if not isinstance(switches, dict) or set(switches) - {"resources", "prompts"}:
            raise GatewayConfigError(
                "PC500", f'{where}.policyctl: only "resources" and "prompts" may be set'
            )
        for key, value in switches.items():
            if value not in (PASS, BLOCK):
                raise GatewayConfigError(
                    "PC500", f'{where}.policyctl.{key} must be "{PASS}" or "{BLOCK}"'
                )
        common = {
            "resources": switches.get("resources", BLOCK),
            "prompts": switches.get("prompts", BLOCK),
        }
        if command is not None:
            if not isinstance(command, str) or not command:
                raise GatewayConfigError("PC500", f"{where}.command must be a non-empty string")
            cwd = entry.get("cwd")
            if cwd is not None and not isinstance(cwd, str):
                raise GatewayConfigError("PC500", f"{where}.cwd must be a string")
            out.append(
                ServerSpec(
                    name,
                    command=command,
                    args=_strings(entry.get("args", []), f"{where}.args", "list"),
                    env=_strings(entry.get("env", {}), f"{where}.env", "map"),
                    cwd=cwd,
                    **common,
                )
            )
        else:
            if not isinstance(url, str) or not url.startswith(("http://", "https://")):
                raise GatewayConfigError("PC500", f"{where}.url must be an http(s) URL")
            headers = _strings(entry.get("headers", {}), f"{where}.headers", "map")
            out.append(ServerSpec(name, url=url, headers=headers, **common))
    return out


def read_token(path: str) -> str:
    """A bearer token file: its whole content, surrounding whitespace removed."""
    try:
        token = Path(path).read_text(encoding="utf-8")[:4096].strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise GatewayConfigError("PC501", f"the token file {path} cannot be read: {exc}") from None
    _check_token(token, path)
    return token


def _check_token(token: Any, where: str) -> None:
    if not isinstance(token, str) or len(token) < MIN_TOKEN_CHARS or not token.isprintable():
        raise GatewayConfigError(
            "PC501",
            f"{where}: a token must be at least {MIN_TOKEN_CHARS} printable characters "
            "(e.g. `openssl rand -hex 32`)",
        )


@dataclass(frozen=True, slots=True)
class ClientEntry:
    name: str
    token: str
    context: RunContext


def load_clients(path: str, to_context: Callable[[Any], RunContext]) -> list[ClientEntry]:
    """`{"clients": {NAME: {"token": "...", "context": {agent, channel, ...}}}}`: each HTTP
    client's bearer token and the run context its token stands for (the fields of a
    `--context` file, read by `to_context`, which raises `ValueError` with the reason)."""
    data = _read_json(path, "PC501")
    clients = data.get("clients") if isinstance(data, dict) else None
    if not isinstance(clients, dict) or not clients:
        raise GatewayConfigError(
            "PC501", f'{path}: expected {{"clients": {{NAME: {{"token": ..., "context": {{}}}}}}}}'
        )
    out: list[ClientEntry] = []
    for name, entry in clients.items():
        where = f"{path}: clients.{name}"
        if not isinstance(entry, dict) or set(entry) - {"token", "context"}:
            raise GatewayConfigError("PC501", f'{where}: only "token" and "context" may be set')
        _check_token(entry.get("token"), f"{where}.token")
        try:
            context = to_context(entry.get("context", {}))
        except ValueError as exc:
            raise GatewayConfigError("PC501", f"{where}.context: {exc}") from None
        if any(hmac.compare_digest(c.token, entry["token"]) for c in out):
            raise GatewayConfigError("PC501", f"{where}: the token is another client's too")
        out.append(ClientEntry(name, entry["token"], context))
    return out
