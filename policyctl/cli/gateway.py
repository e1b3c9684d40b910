"""`policyctl gateway --policy FILE --servers mcp.json`: an MCP server in front of others,
showing each client only the tools the policy allows and deciding every call.

Over stdio by default (a client starts it like any MCP server); `--listen HOST:PORT` serves
streamable HTTP instead (loopback by default; any other address needs `--token-file` or
`--clients`). Needs the `gateway` extra.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import TYPE_CHECKING, Any

from .common import UsageError, add_context_flags, require_writable_log, subcommand

if TYPE_CHECKING:
    from ..context import RunContext

HELP = "serve upstream MCP servers' tools filtered and decided by the policy (MCP gateway)"
EXAMPLE = """examples:
  policyctl gateway --policy policy.yaml --servers mcp.json --agent coder
  policyctl gateway --policy policy.bundle.json --servers mcp.json --listen 127.0.0.1:8765
  policyctl gateway --policy p.yaml --servers mcp.json --listen 0.0.0.0:8765 --clients clients.json
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subcommand(sub, "gateway", HELP, EXAMPLE)
    p.add_argument("--policy", required=True, metavar="FILE|BUNDLE")
    p.add_argument(
        "--servers",
        required=True,
        metavar="FILE",
        help='upstream servers: {"mcpServers": {NAME: {"command", "args", "env"} | {"url"}}}',
    )
    p.add_argument(
        "--listen",
        metavar="HOST:PORT",
        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio",
    )
    p.add_argument("--token-file", metavar="FILE", help="the bearer token HTTP clients must send")
    p.add_argument(
        "--clients",
        metavar="FILE",
        help='{"clients": {NAME: {"token", "context"}}}: each HTTP client\'s token and run '
        "context (instead of the context flags)",
    )
    p.add_argument(
        "--refusal-detail",
        choices=["minimal", "layer", "full"],
        default="layer",
        help="what a refusal says: nothing, the layer/entry/file:line:col, or all",
    )
    p.add_argument("--log", metavar="FILE", help="append each decision as a JSON line")
    p.add_argument(
        "--log-arguments", action="store_true", help="log arguments (default: their SHA-256)"
    )
    p.add_argument(
        "--approval-timeout", type=_seconds, default=120.0, help="seconds to wait for an answer"
    )
    p.add_argument("--call-timeout", type=_seconds, default=60.0, help="seconds per upstream call")
    p.add_argument(
        "--reload-interval", type=_seconds, default=1.0, help="seconds between policy checks"
    )
    add_context_flags(p)
    p.set_defaults(run=run_gateway)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value < 1e6:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


def run_gateway(args: argparse.Namespace) -> int:
    try:
        import mcp  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise UsageError(
            "policyctl gateway needs the `gateway` extra: pip install 'policyctl[gateway]'"
        ) from None
    import anyio

    from ..integrations.gateway.config import (
        GatewayConfigError,
        load_clients,
        load_servers,
        read_token,
    )
    from ..integrations.gateway.run import is_loopback, run_http, run_stdio
    from ..integrations.gateway.server import Gateway, GatewayOptions
    from ..runtime.store import PolicyStore
    from .common import context_from_args

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(message)s")
    try:
        servers = load_servers(args.servers)
        clients = load_clients(args.clients, _context) if args.clients else []
        tokens = [c.token for c in clients]
        if args.token_file:
            tokens.append(read_token(args.token_file))
        host, port = _listen(args.listen) if args.listen else (None, 0)
        if host is not None and not is_loopback(host) and not tokens:
            raise GatewayConfigError(
                "PC504",
                f"--listen {host} is not a loopback address: give --token-file or --clients "
                "so that only clients with a token are served",
            )
        if host is None and (args.clients or args.token_file):
            raise GatewayConfigError("PC504", "--clients and --token-file need --listen")
    except GatewayConfigError as exc:
        raise UsageError(str(exc)) from None
    if args.log is not None:
        require_writable_log(args.log, "--log")
    store = PolicyStore(args.policy)
    if store.current is None:
        shown = "; ".join(str(d) for d in store.errors[:5])
        raise UsageError(f"the policy {args.policy} cannot be used: {shown}")
    options = GatewayOptions(
        context=context_from_args(args),
        refusal_detail=args.refusal_detail,
        log=args.log,
        log_arguments=args.log_arguments,
        approval_timeout=args.approval_timeout,
        call_timeout=args.call_timeout,
        reload_interval=args.reload_interval,
    )
    # the token file's client has the flags' context; the clients file's have their own
    gateway = Gateway(store, servers, options, clients)
    if args.token_file and clients:
        raise UsageError("give --token-file or --clients, not both")
    try:
        if host is None:
            anyio.run(run_stdio, gateway)
        else:
            anyio.run(run_http, gateway, host, port, tokens)
    except KeyboardInterrupt:
        return 0
    return 0


def _context(data: Any) -> RunContext:
    """A clients file's context: the fields of a `--context` file."""
    from pydantic import ValidationError

    from ..analysis.contextspec import ContextSpec

    try:
        return ContextSpec.model_validate(data).to_run_context()
    except ValidationError as exc:
        first = exc.errors()[0]
        at = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"{at}: {first['msg']}" if at else first["msg"]) from None


def _listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--listen {text!r}: give HOST:PORT, e.g. 127.0.0.1:8765")
    return host, int(port)
