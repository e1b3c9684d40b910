"""`policyctl hook doctor HOST`: will the installed hook decide every tool call?

It reads the host's settings files (project and user scope, Claude Code's local one too),
finds policyctl's handler under the event that decides calls, and reports, as warnings with
codes PC371-PC374: no handler, a matcher that misses some of the host's tools (each catalog
tool and an MCP tool name are tried against it, as the host matches), a timeout too short
to decide in, hooks turned off, and a host version with a known hole (`HOST --version` when
the binary is on PATH). Exit 0 when nothing is found, 1 with findings, 2 for a settings file
it cannot read.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .install import is_ours
from .protocols import HOSTS, Host

#: below this many seconds a hook's timeout leaves no room for a decision (the host then
#: lets the call proceed)
MIN_TIMEOUT_SECONDS = 2.0

#: versions known to skip hooks for some calls: (host, first affected, first fixed or None
#: while no release is known to fix it, what happens and where it was reported)
KNOWN_HOLES: tuple[tuple[str, tuple[int, ...], tuple[int, ...] | None, str], ...] = (
    (
        "claude-code",
        (2, 1, 76),
        None,
        "tool calls of subagents (the Agent tool) have been reported to skip PreToolUse hooks "
        "from 2.1.76 to 2.1.234 (anthropics/claude-code #34692, #78970, #88441); no release is "
        "known to fix it: deny Agent in the policy, or check with a subagent that runs Bash",
    ),
)


@dataclass(frozen=True)
class Finding:
    where: str
    code: str
    message: str


def candidate_files(host: Host) -> list[Path]:
    from .install import settings_path

    files = [settings_path(host, "project"), settings_path(host, "user")]
    if host.name == "claude-code":
        files.insert(1, Path(".claude/settings.local.json"))
    return files


def _matches(matcher: Any, host: Host, name: str) -> bool:
    """Whether the host runs a group with this matcher for the tool `name`."""
    if matcher is None or matcher == "" or (host.name == "claude-code" and matcher == "*"):
        return True
    if not isinstance(matcher, str):
        return False
    try:
        return re.fullmatch(matcher, name) is not None
    except re.error:
        return matcher == name


def host_tool_names(host: Host) -> list[str]:
    """The names the host reports, as it spells them: the built-in catalog's tool ids and
    alias names (older names of renamed tools), and an MCP tool's name."""
    from ...catalog.load import builtin_catalog_file

    data = builtin_catalog_file(host.catalog)
    names = [row["id"] for row in data.get("tools", [])]
    names += list(data.get("aliases", {}))
    return [*names, f"{host.mcp_prefix}server{host.mcp_separator}tool"]


def check_settings(host: Host, files: list[tuple[str, Any]]) -> list[Finding]:
    """The findings over parsed settings files ((shown path, JSON value) each)."""
    findings: list[Finding] = []
    covered: set[str] = set()
    installed = False
    names = host_tool_names(host)
    for shown, settings in files:
        if not isinstance(settings, dict):
            continue
        if host.name == "claude-code" and settings.get("disableAllHooks") is True:
            findings.append(Finding(shown, "PC373", "disableAllHooks is true: no hook runs"))
        config = settings.get("hooksConfig")
        if host.name == "gemini-cli" and isinstance(config, dict):
            if config.get("enabled") is False:
                findings.append(Finding(shown, "PC373", "hooksConfig.enabled is false"))
            disabled = config.get("disabled")
            if isinstance(disabled, list) and any("policyctl" in str(d) for d in disabled):
                findings.append(Finding(shown, "PC373", "hooksConfig.disabled lists policyctl"))
        hooks = settings.get("hooks")
        groups = hooks.get(host.call_event) if isinstance(hooks, dict) else None
        for group in groups if isinstance(groups, list) else []:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else []:
                if not is_ours(handler, host):
                    continue
                installed = True
                covered |= {n for n in names if _matches(group.get("matcher"), host, n)}
                findings.extend(_timeout(shown, host, handler.get("timeout")))
    if not installed:
        findings.append(
            Finding(
                "settings",
                "PC371",
                f"no policyctl hook under {host.call_event} in "
                + ", ".join(shown for shown, _ in files),
            )
        )
    elif missed := [n for n in names if n not in covered]:
        findings.append(
            Finding(
                "settings",
                "PC371",
                f"the {host.call_event} matcher misses {len(missed)} tools: {', '.join(missed)}",
            )
        )
    return findings


def _timeout(shown: str, host: Host, value: Any) -> list[Finding]:
    if value is None:
        return []  # the host's default (60 s) is ample
    if not isinstance(value, int | float):
        return [Finding(shown, "PC372", f"the hook's timeout {value!r} is not a number")]
    seconds = value / 1000 if host.timeout_unit == "ms" else value
    if seconds < MIN_TIMEOUT_SECONDS:
        unit = host.timeout_unit
        return [
            Finding(
                shown,
                "PC372",
                f"the hook's timeout is {value:g} {unit}; give it at least "
                f"{MIN_TIMEOUT_SECONDS * (1000 if unit == 'ms' else 1):g} {unit}",
            )
        ]
    return []


def parse_version(text: str) -> tuple[int, ...] | None:
    found = re.search(r"(\d+)\.(\d+)\.(\d+)", text)
    return tuple(int(x) for x in found.groups()) if found else None


def check_version(host: Host, version: str) -> list[Finding]:
    parsed = parse_version(version)
    if parsed is None:
        return []
    return [
        Finding(f"{host.binary} {version}", "PC374", what)
        for name, bad, fixed, what in KNOWN_HOLES
        if name == host.name and bad <= parsed and (fixed is None or parsed < fixed)
    ]


def host_version(host: Host) -> str | None:
    binary = shutil.which(host.binary)
    if binary is None:
        return None
    try:
        out = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def doctor(host_name: str, settings: list[str], version: str | None) -> int:
    host = HOSTS[host_name]
    paths = [Path(s) for s in settings] if settings else candidate_files(host)
    parsed: list[tuple[str, Any]] = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError) as exc:
            print(f"{path}: PC370 host settings unreadable: {exc}", file=sys.stderr)
            return 2
        try:
            parsed.append((str(path), json.loads(text) if text.strip() else {}))
        except json.JSONDecodeError as exc:
            print(
                f"{path}:{exc.lineno}:{exc.colno}: PC370 host settings unreadable: {exc.msg}",
                file=sys.stderr,
            )
            return 2
    if parsed:
        findings = check_settings(host, parsed)
    else:
        shown = ", ".join(map(str, paths))
        findings = [Finding("settings", "PC371", f"no settings file found ({shown})")]
    shown_version = version if version is not None else host_version(host)
    if shown_version is not None:
        findings.extend(check_version(host, shown_version))
    for f in findings:
        print(f"{f.where}: {f.code} {f.message}")
    if not findings:
        scope = ", ".join(shown for shown, _ in parsed)
        print(f"policyctl's {host.name} hook fires for every tool ({scope})")
        if shown_version is None:
            print(f"  ({host.binary} is not on PATH: its version was not checked)")
        return 0
    return 1
