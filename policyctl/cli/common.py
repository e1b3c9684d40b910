"""What the subcommands share: the context flags, loading a policy, printing JSON."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..catalog.inventory import Tool
    from ..compile.compiled import CompiledPolicy
    from ..context import RunContext
    from ..diagnostics import PolicyError

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad flags or unreadable input: exit 2 with the message."""


class Reported(Exception):
    """The problem has been printed already; exit with this code."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def subcommand(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    help_text: str,
    example: str,
) -> argparse.ArgumentParser:
    """A subcommand's parser: its help line, and its examples shown under --help."""
    return sub.add_parser(
        name,
        help=help_text,
        description=help_text,
        epilog=example,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


class _AskingFlagOnly(argparse.Action):
    """`--tool` once added a tool under `resolve` and `simulate` while `explain --tool` asks
    about one. It now always means "ask about": where a command has nothing to ask, the flag
    is refused with what to write instead, so no script changes meaning silently."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        parser.error(
            f"--tool {values} no longer adds a tool here: write --add-tool {values} to add it "
            "to the run's inventory, or use `policyctl explain FILE --tool NAME` to ask why a "
            "tool is allowed or removed"
        )


def add_context_flags(p: argparse.ArgumentParser, tool_flag: bool = True) -> None:
    """The flags that describe a run. A tool is added to the inventory with `--add-tool`
    everywhere; `--tool` names a tool to ask about (`explain`). With `tool_flag`, a stray
    `--tool` is refused with a message instead of being taken for an addition."""
    g = p.add_argument_group("run context")
    g.add_argument("--agent", help="agent id")
    g.add_argument("--provider", help="model provider, e.g. openai")
    g.add_argument("--model", help="model id, e.g. gpt-5.4")
    g.add_argument("--channel", help="chat channel, e.g. telegram")
    g.add_argument("--account", help="channel account id")
    g.add_argument("--group", help="group id (ignored when a session key says otherwise)")
    g.add_argument("--sender-id")
    g.add_argument("--sender-e164")
    g.add_argument("--sender-username")
    g.add_argument("--sender-name")
    g.add_argument("--owner", action="store_true", default=None, help="the sender is the owner")
    g.add_argument("--session-key", help="e.g. agent:coder:telegram:group:-100123")
    g.add_argument("--spawned-by", help="the parent session key of a spawned run")
    g.add_argument("--subagent-depth", type=int)
    g.add_argument("--parent-tools", help="comma-separated tools of the parent run (inheritance)")
    g.add_argument("--trigger", choices=["user", "cron", "memory", "skill", "spawn", "gateway"])
    g.add_argument(
        "--workspace", metavar="DIR", help="the run's workspace root (path call rules: ./src/**)"
    )
    g.add_argument("--home", metavar="DIR", help="the run's home directory (path call rules: ~/x)")
    g.add_argument("--context", metavar="FILE", help="YAML/JSON file with the same fields")
    g.add_argument(
        "--tool-inventory",
        metavar="FILE",
        help='JSON list of {"name", "pluginId", "optional"}: the run\'s whole inventory',
    )
    g.add_argument(
        "--add-tool",
        action="append",
        default=[],
        metavar="NAME[@PLUGIN]",
        dest="extra_tools",
        help="add a tool to the inventory (repeatable)",
    )
    if tool_flag:
        g.add_argument("--tool", action=_AskingFlagOnly, metavar="NAME", help=argparse.SUPPRESS)


def add_sarif_root_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--sarif-root",
        metavar="DIR",
        help="with --format sarif: make file URIs relative to DIR (default: the working "
        "directory), e.g. the repository root for code scanning",
    )


def _context_file(path: str) -> RunContext:
    from pydantic import ValidationError

    from ..analysis.contextspec import ContextSpec
    from ..diagnostics import PolicyError
    from ..document.extends import load_document
    from ..formats.schema_errors import diagnostics_from_validation
    from .output import render_diagnostics

    try:
        loaded = load_document(path)
        return ContextSpec.model_validate(loaded.data).to_run_context()
    except PolicyError as exc:
        raise UsageError("invalid context file\n" + render_diagnostics(exc.diagnostics)) from None
    except ValidationError as exc:
        diags = diagnostics_from_validation(
            exc, loaded.locations, model=ContextSpec, data=loaded.data
        )
        raise UsageError("invalid context file\n" + render_diagnostics(diags)) from None


def context_from_args(args: argparse.Namespace) -> RunContext:
    """The context file (if any), then every flag given on top of it."""
    from dataclasses import replace

    from ..context import Capture, RunContext, Sender
    from ..names import fold

    ctx = _context_file(args.context) if args.context else RunContext()
    changes: dict[str, Any] = {}
    for flag, field_name in (
        ("agent", "agent"),
        ("provider", "provider"),
        ("model", "model"),
        ("channel", "channel"),
        ("account", "account"),
        ("group", "group"),
        ("session_key", "session_key"),
        ("spawned_by", "spawned_by"),
        ("trigger", "trigger"),
        ("workspace", "workspace"),
        ("home", "home"),
    ):
        value = getattr(args, flag)
        if value is not None:
            changes[field_name] = value
    if args.owner:
        changes["is_owner"] = True
    if args.subagent_depth is not None:
        if args.subagent_depth < 0:
            raise UsageError("--subagent-depth must be >= 0")
        changes["subagent_depth"] = args.subagent_depth
    if args.parent_tools is not None:
        names = tuple(fold(n) for n in args.parent_tools.split(",") if n.strip())
        changes["parent"] = Capture(names)
    s = ctx.sender
    sender = Sender(
        args.sender_id if args.sender_id is not None else s.id,
        args.sender_e164 if args.sender_e164 is not None else s.e164,
        args.sender_username if args.sender_username is not None else s.username,
        args.sender_name if args.sender_name is not None else s.name,
    )
    if sender != s:
        changes["sender"] = sender
    return replace(ctx, **changes) if changes else ctx


def inventory_from_args(args: argparse.Namespace, policy: CompiledPolicy) -> list[Tool] | None:

    tools: list[Tool] | None = None
    if args.tool_inventory:
        from pathlib import Path

        from ..diagnostics import PolicyError
        from ..formats.jsonpos import parse_json
        from ..formats.read import read_text
        from ..located import flatten
        from ..settings import default_limits

        # read and parsed as a JSON policy file is: a regular file, the byte cap, the node
        # and depth caps (a deep list was a RecursionError), located diagnostics
        name = args.tool_inventory
        limits = default_limits()
        try:
            raw, _ = flatten(parse_json(read_text(Path(name), limits, name), name, limits))
        except PolicyError as exc:
            raise UsageError(str(exc.diagnostics[0])) from None
        if not isinstance(raw, list):
            raise UsageError(f"{args.tool_inventory}: expected a JSON list of tools")
        tools = []
        for i, item in enumerate(raw):
            if isinstance(item, str):
                item = {"name": item}
            if (
                not isinstance(item, dict)
                or not isinstance(item.get("name"), str)
                or set(item) - {"name", "pluginId", "optional"}
            ):
                raise UsageError(
                    f"{args.tool_inventory}: item {i} must be "
                    '{"name": str, "pluginId": str?, "optional": bool?}'
                )
            tools.append(
                _listed_tool(item["name"], item.get("pluginId"), bool(item.get("optional", False)))
            )
    if args.extra_tools:
        tools = tools if tools is not None else policy.default_tools()
        for spec in args.extra_tools:
            name, _, plugin = spec.partition("@")
            tools.append(_listed_tool(name, plugin or None, False))
    return tools


def _listed_tool(name: str, plugin_id: Any, optional: bool) -> Tool:
    """A tool the operator lists for the run: `bundle-mcp` there is the operator describing
    the host's MCP tools (`Tool.mcp`), as a host bridging MCP servers does."""
    from ..catalog.inventory import Tool, marks_mcp

    if marks_mcp(plugin_id):
        return Tool.mcp(name, optional)
    return Tool(name, plugin_id, optional)


def report_failure(exc: PolicyError, headline: str) -> None:
    """Every diagnostic of a file that could not be used, then one line saying so (stderr)."""
    from .output import render_diagnostics

    print(render_diagnostics(exc.diagnostics, sys.stderr), file=sys.stderr)
    print(headline, file=sys.stderr)


def load_or_report(path: str) -> CompiledPolicy:
    """Load a policy (or a `*.bundle.json` from `policyctl compile`); on failure print every
    diagnostic and exit 2 (via `Reported`)."""
    from ..api import load_policy
    from ..diagnostics import PolicyError
    from .output import count_summary

    try:
        if path.endswith(".bundle.json"):
            from ..compile.bundle import load_bundle
            from ..compile.bundlekeys import TRUST_CODES
            from .output import render_diagnostics

            policy = load_bundle(path)
            # what vouches for the bundle (PC161-PC163) is said before any answer from it
            trust = [d for d in policy.diagnostics if d.code in TRUST_CODES]
            if trust:
                print(render_diagnostics(trust, sys.stderr), file=sys.stderr)
            return policy
        return load_policy(path)
    except PolicyError as exc:
        report_failure(exc, f"{path}: invalid policy ({count_summary(exc.diagnostics)})")
        raise Reported(EXIT_USAGE) from None


def require_writable_log(path: str, flag: str, also: str = "") -> None:
    """Refuse, before serving, a decision log that cannot be appended to: otherwise every
    call would be refused (PC529) by a server that looks healthy."""
    from ..integrations.hosts.decisionlog import log_unwritable

    problem = log_unwritable(path)
    if problem is not None:
        raise UsageError(
            f"{problem}: give {flag} a file in a directory that exists and that policyctl "
            f"may write{also}"
        )


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")
