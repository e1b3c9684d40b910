"""`policyctl hook install`: merge policyctl's hook entries into a host's settings file.

The settings file is read as JSON, policyctl's entries are added (or brought up to date,
when an earlier install left them with another policy or timeout), and every other key,
hook and setting is kept as it was. A second install with the same flags changes nothing.
A file that is not valid JSON, or whose `hooks` is not the shape the host reads, is left
untouched (PC370): guessing there could lose the operator's settings.

Entries written (the matcher `*` is every tool; Gemini's matcher is a regex, `.*`):

    Claude Code  hooks.PreToolUse[]    {matcher: "*", hooks: [{type, command, timeout (s)}]}
    Gemini CLI   hooks.BeforeTool[]    {matcher: ".*", hooks: [{type, command, name, timeout (ms)}]}
                 hooks.BeforeToolSelection[]  {hooks: [the same handler]}
    Codex        hooks.PreToolUse[]    {hooks: [{type, command, timeout (s)}]}  (no matcher: all)
"""

from __future__ import annotations

import difflib
import json
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from .protocols import HOSTS, Host

#: the marker that says a hook handler is policyctl's own for this host
HANDLER_NAME = "policyctl"
#: the matcher that selects every tool: Claude Code's `*`, a regex for Gemini CLI, and none
#: for Codex (its matcher is a regex; a group without one runs for every tool)
CALL_MATCHER: dict[str, str | None] = {"claude-code": "*", "gemini-cli": ".*", "codex": None}


class SettingsError(Exception):
    """The settings file cannot be merged safely (the message says why; code PC370);
    `where` is the line:col of a JSON syntax error."""

    def __init__(self, message: str, where: str | None = None) -> None:
        super().__init__(message)
        self.where = where


def settings_path(host: Host, scope: str, explicit: str | None = None) -> Path:
    if explicit is not None:
        return Path(explicit)
    if scope == "user":
        if host.name == "codex" and os.environ.get("CODEX_HOME"):
            return Path(os.environ["CODEX_HOME"]) / "hooks.json"
        return Path(os.path.expanduser(host.user_settings))
    return Path(host.project_settings)


def hook_command(
    host: Host,
    policy: str,
    command: str | None,
    timeout: float,
    warm: bool = True,
    ask: bool = True,
) -> str:
    """The command line the host runs: policyctl found on PATH (else this interpreter with
    `-m policyctl`), the host, the policy's absolute path, a timeout below the host's,
    `--warm` (a helper process keeps the policy in memory between calls) unless not wanted,
    and `--no-ask` for settings of runs where no one answers."""
    if command is None:
        found = shutil.which("policyctl")
        command = shlex.quote(found) if found else f"{shlex.quote(sys.executable)} -m policyctl"
    inner = max(1.0, timeout - 1)  # refuse (PC184) before the host gives up and proceeds
    return (
        f"{command} hook {host.name} --policy {shlex.quote(os.path.abspath(policy))} "
        f"--timeout {inner:g}" + (" --warm" if warm else "") + ("" if ask else " --no-ask")
    )


def is_ours(handler: Any, host: Host) -> bool:
    return (
        isinstance(handler, dict)
        and isinstance(handler.get("command"), str)
        and f" hook {host.name} " in f" {handler['command']} "
        and "policyctl" in handler["command"]
    )


def merged(settings: Any, host: Host, command: str, timeout: float) -> dict[str, Any]:
    """`settings` with policyctl's entries in place (a new object; the input is not changed)."""
    if not isinstance(settings, dict):
        raise SettingsError("the settings file must hold a JSON object")
    out: dict[str, Any] = json.loads(json.dumps(settings))  # a deep copy, as plain JSON
    hooks = out.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError('"hooks" must be a JSON object of events')
    handler: dict[str, Any] = {"type": "command", "command": command}
    if host.name == "gemini-cli":
        handler["name"] = HANDLER_NAME
    handler["timeout"] = int(timeout * 1000) if host.timeout_unit == "ms" else timeout
    if host.timeout_unit == "s" and float(timeout).is_integer():
        handler["timeout"] = int(timeout)
    events = [(host.call_event, CALL_MATCHER[host.name])]
    if host.list_event is not None:
        events.append((host.list_event, None))
    for event, matcher in events:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
            raise SettingsError(f'"hooks.{event}" must be a list of objects')
        _place(groups, handler, matcher, host)
    return out


def _place(
    groups: list[dict[str, Any]], handler: dict[str, Any], matcher: str | None, host: Host
) -> None:
    """Update policyctl's handler where it is, or add a group of its own. A group shared with
    other handlers keeps its matcher (theirs): policyctl's handler moves to its own group."""
    for group in groups:
        handlers = group.get("hooks")
        if not isinstance(handlers, list):
            continue
        for i, existing in enumerate(handlers):
            if not is_ours(existing, host):
                continue
            if group.get("matcher") == matcher or (len(handlers) == 1):
                handlers[i] = {**existing, **handler}
                if matcher is None:
                    group.pop("matcher", None)
                else:
                    group["matcher"] = matcher  # ours must see every tool
                return
            del handlers[i]
            break
    group = {"hooks": [handler]}
    if matcher is not None:
        group = {"matcher": matcher, **group}
    groups.append(group)


def _read(path: Path) -> tuple[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return "", {}
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"cannot be read ({exc})") from None
    if not text.strip():
        return text, {}
    try:
        return text, json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsError(f"not valid JSON: {exc.msg}", f"{exc.lineno}:{exc.colno}") from None


def install(
    host_name: str,
    policy: str,
    *,
    scope: str,
    settings: str | None,
    dry_run: bool,
    timeout: float,
    command: str | None,
    warm: bool = True,
    ask: bool = True,
) -> int:
    host = HOSTS[host_name]
    path = settings_path(host, scope, settings)
    if not Path(policy).is_file():
        print(f"policyctl hook install: {policy}: no such policy file", file=sys.stderr)
        return 2
    try:
        before_text, before = _read(path)
        line = hook_command(host, policy, command, timeout, warm, ask)
        after = merged(before, host, line, timeout)
    except SettingsError as exc:
        where = f"{path}:{exc.where}" if exc.where else str(path)
        print(f"{where}: PC370 host settings unreadable: {exc}", file=sys.stderr)
        print("  fix: correct the file by hand; nothing was changed", file=sys.stderr)
        return 2
    after_text = json.dumps(after, indent=2, ensure_ascii=False) + "\n"
    if after == before and before_text:
        print(f"{path}: policyctl's {host.name} hook is installed already (no change)")
        return 0
    if dry_run:
        sys.stdout.writelines(
            difflib.unified_diff(
                before_text.splitlines(keepends=True),
                after_text.splitlines(keepends=True),
                f"{path} (now)",
                f"{path} (after install)",
            )
        )
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.policyctl.tmp")
    temporary.write_text(after_text, encoding="utf-8")
    if path.exists():
        os.chmod(temporary, path.stat().st_mode & 0o777)
    os.replace(temporary, path)
    print(f"{path}: installed policyctl's {host.name} hook ({host.call_event})")
    if host.name == "codex":
        print("  Codex asks you to review and trust a new hook before it runs: open /hooks")
    return 0
