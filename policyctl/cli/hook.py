"""`policyctl hook HOST --policy FILE`: decide one tool call of an agent host, as its hook.

The host (Claude Code, Gemini CLI, Codex) starts this command for every tool call, writes
the hook payload on stdin and reads the decision on stdout. Every failure (bad flags aside,
which argparse reports with exit 2, the hosts' blocking code too) is answered with a
refusal in the host's format and its blocking exit code: never a traceback, never exit 1,
which the hosts read as "proceed".

`policyctl hook install HOST` and `policyctl hook doctor HOST` set the hook up and check it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import add_context_flags, subcommand

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..integrations.hosts.handler import HostReply
    from ..integrations.hosts.policyfile import LoadedPolicy
    from ..integrations.hosts.protocols import Host

HELP = "decide an agent host's tool call as its hook (Claude Code, Gemini CLI, Codex)"
EXAMPLE = """examples:
  echo '{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}' \\
    | policyctl hook claude-code --policy examples/hosts-team.yaml
  policyctl hook install claude-code --policy policy.bundle.json --dry-run
  policyctl hook doctor gemini-cli
"""
HOST_NAMES = ("claude-code", "gemini-cli", "codex")
#: the most a payload may hold (a Write of a large file carries its content)
MAX_PAYLOAD_BYTES = 16 * 1024 * 1024
DEFAULT_TIMEOUT = 10.0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subcommand(sub, "hook", HELP, EXAMPLE)
    hosts = p.add_subparsers(dest="hook_action", metavar="HOST|install|doctor")
    for name in HOST_NAMES:
        h = hosts.add_parser(name, help=f"decide one {name} hook event read on stdin")
        _decide_flags(h)
        h.set_defaults(run=run_hook, host=name)
    i = hosts.add_parser("install", help="merge policyctl's hook into a host's settings")
    i.add_argument("host", choices=HOST_NAMES)
    i.add_argument("--policy", required=True, metavar="FILE|BUNDLE")
    i.add_argument("--scope", choices=["project", "user"], default="project")
    i.add_argument("--settings", metavar="FILE", help="the settings file (default: the scope's)")
    i.add_argument("--dry-run", action="store_true", help="print the change as a unified diff")
    i.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds")
    i.add_argument(
        "--command",
        dest="hook_command",
        metavar="CMD",
        help="how the host starts policyctl (default: policyctl)",
    )
    i.add_argument(
        "--no-ask",
        action="store_true",
        help="add --no-ask to the command: for settings of headless runs, where an ask waits "
        "for no one",
    )
    i.add_argument(
        "--no-warm",
        action="store_true",
        help="leave --warm out of the command (every call then starts the engine afresh)",
    )
    i.set_defaults(run=run_install)
    d = hosts.add_parser("doctor", help="check that the installed hook fires for every tool")
    d.add_argument("host", choices=HOST_NAMES)
    d.add_argument(
        "--settings",
        action="append",
        default=[],
        metavar="FILE",
        help="settings file to read (default: the project's and the user's)",
    )
    d.add_argument(
        "--version-of-host",
        dest="host_version",
        metavar="VERSION",
        help="the host's version (default: ask `HOST --version` when on PATH)",
    )
    d.set_defaults(run=run_doctor)


def _decide_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--policy",
        required=True,
        metavar="FILE|BUNDLE",
        help="policy file (YAML, TOML, JSON) or a bundle from `policyctl compile`",
    )
    p.add_argument(
        "--refusal-detail",
        choices=["minimal", "layer", "full"],
        default="layer",
        help="what a reason says: nothing, the layer/entry/file:line:col, or all",
    )
    p.add_argument(
        "--no-ask",
        action="store_true",
        help="no one can answer an ask in this run (a headless or CI run): refuse the call, "
        "saying approval is needed, instead of asking",
    )
    p.add_argument("--log", metavar="FILE", help="append each decision as a JSON line")
    p.add_argument(
        "--log-arguments",
        action="store_true",
        help="log the call's arguments (default: only their SHA-256)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help="refuse the call when no decision came within this many seconds",
    )
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="where compiled policies are kept (default: ~/.cache/policyctl/hooks)",
    )
    p.add_argument(
        "--warm",
        action="store_true",
        help="ask a warm helper process that keeps the policy in memory (started by the first "
        "call, it exits after 5 idle minutes): a call then costs little more than Python's "
        "start-up",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="compile the policy on every call instead of reading the cache",
    )
    add_context_flags(p)


class _TimedOut(Exception):
    pass


def _alarm(_signum: int, _frame: Any) -> None:
    raise _TimedOut


def run_hook(args: argparse.Namespace) -> int:
    from ..integrations.hosts.handler import failure
    from ..integrations.hosts.protocols import HOSTS

    host = HOSTS[args.host]
    try:
        reply = _decide(args, host)
    except _TimedOut:
        reply = failure(host, "PC184", f"no decision within {args.timeout:g} s (--timeout)")
    except BaseException as exc:  # a crash must refuse, never let the call pass
        reply = failure(host, "PC185", f"{type(exc).__name__}: {exc}")
    finally:
        _stop_alarm()
    sys.stdout.write(reply.stdout)
    sys.stdout.flush()
    if reply.stderr:
        sys.stderr.write(reply.stderr)
    return reply.exit_code


def _start_alarm(seconds: float) -> None:
    import signal

    if seconds > 0 and hasattr(signal, "setitimer"):
        signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)


def _stop_alarm() -> None:
    import signal

    if hasattr(signal, "setitimer"):
        signal.setitimer(signal.ITIMER_REAL, 0)


def _decide(args: argparse.Namespace, host: Host) -> HostReply:
    _start_alarm(args.timeout)
    try:
        raw = sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1)
        return decide_payload(args, host, raw)
    finally:
        _stop_alarm()


def decide_payload(
    args: argparse.Namespace,
    host: Host,
    raw: bytes,
    load: Callable[[str, Path | None], LoadedPolicy] | None = None,
) -> HostReply:
    """The reply to one payload's bytes under the parsed flags (`load` reads the policy: the
    compiled cache, or a warm helper's memory)."""
    from ..integrations.hosts.decisionlog import append_record
    from ..integrations.hosts.handler import HostOptions, failure, handle
    from ..integrations.hosts.policyfile import PolicyUnreadable, default_cache_dir, load_for_hook
    from .common import context_from_args

    event = None
    if len(raw) > MAX_PAYLOAD_BYTES:
        return failure(host, "PC180", f"the hook payload is larger than {MAX_PAYLOAD_BYTES} bytes")
    try:
        payload = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return failure(host, "PC180", f"the hook payload is not UTF-8 (byte {exc.start})")
    except json.JSONDecodeError as exc:
        where = f"<stdin>:{exc.lineno}:{exc.colno}"
        return failure(host, "PC180", f"{where}: the hook payload is not JSON: {exc.msg}")
    if isinstance(payload, dict) and isinstance(payload.get("hook_event_name"), str):
        event = payload["hook_event_name"]
    try:
        cache = None if args.no_cache else Path(args.cache_dir or default_cache_dir())
        loaded = (load or load_for_hook)(args.policy, cache)
    except PolicyUnreadable as exc:
        return failure(host, "PC183", str(exc), event)
    options = HostOptions(
        host,
        context_from_args(args),
        home=os.path.expanduser("~"),
        refusal_detail=args.refusal_detail,
        revision=loaded.revision,
        log_arguments=args.log_arguments,
        ask=not args.no_ask,
    )
    reply = handle(payload, loaded.policy, options)
    if args.log:
        problem = append_record(args.log, reply.record)
        if problem is not None and reply.exit_code == 0 and reply.record.get("verdict") != "deny":
            # an audit log that cannot be written refuses the call: a logging failure may
            # turn an allow into a deny, never a deny into an allow
            return failure(host, "PC186", problem, event)
    return reply


def run_install(args: argparse.Namespace) -> int:
    from ..integrations.hosts.install import install

    return install(
        args.host,
        args.policy,
        scope=args.scope,
        settings=args.settings,
        dry_run=args.dry_run,
        timeout=args.timeout,
        command=args.hook_command,
        warm=not args.no_warm,
        ask=not args.no_ask,
    )


def run_doctor(args: argparse.Namespace) -> int:
    from ..integrations.hosts.doctor import doctor

    return doctor(args.host, args.settings, args.host_version)
