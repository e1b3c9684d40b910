"""`policyctl serve --policy FILE|BUNDLE|URL`: the decision server (Starlette on Uvicorn).

Needs the `server` extra (`pip install 'policyctl[server]'`); without it the command says so
and exits 2. It listens on 127.0.0.1:8181 unless told otherwise, and refuses to listen on
any other address without `--token-file`.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import stat
import sys
from typing import Any

from .common import UsageError, require_writable_log, subcommand

HELP = "serve decisions over HTTP: /v1/decide, /v1/resolve, hook routes, AuthZEN, /metrics"
EXAMPLE = """examples:
  policyctl serve --policy examples/hosts-team.yaml
  policyctl serve --policy https://bundles.example/team.bundle.json --bundle-dir /var/lib/policyctl
  policyctl serve --policy policy.bundle.json --listen 0.0.0.0:8181 --token-file /run/secrets/tok
"""
DEFAULT_LISTEN = "127.0.0.1:8181"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subcommand(sub, "serve", HELP, EXAMPLE)
    p.add_argument(
        "--policy",
        required=True,
        metavar="FILE|BUNDLE|URL",
        help="a policy file or bundle (hot reloaded), or an http(s) URL of a bundle (polled)",
    )
    p.add_argument("--listen", default=DEFAULT_LISTEN, metavar="HOST:PORT")
    p.add_argument(
        "--token-file",
        metavar="FILE",
        help="bearer tokens, one a line (required to listen on a non-loopback address)",
    )
    p.add_argument("--max-body-bytes", type=int, default=1024 * 1024, metavar="N")
    p.add_argument("--request-timeout", type=float, default=5.0, metavar="SECONDS")
    p.add_argument(
        "--reload-interval",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="how often a policy file is checked for changes",
    )
    p.add_argument(
        "--poll-interval",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how often a bundle URL is polled",
    )
    p.add_argument(
        "--bundle-dir",
        metavar="DIR",
        help="where a polled bundle is kept (served from there after a restart until the URL "
        "answers; default: ~/.cache/policyctl/server)",
    )
    p.add_argument(
        "--bundle-key",
        metavar="FILE",
        help="the key a bundle pulled from a URL must be signed with (default: "
        "POLICYCTL_BUNDLE_KEY_FILE); required with a URL",
    )
    p.add_argument("--decision-log", metavar="FILE|-", help="JSON lines: a file, or - for stdout")
    p.add_argument(
        "--log-arguments",
        action="store_true",
        help="log the calls' arguments (default: only their SHA-256)",
    )
    p.set_defaults(run=run)


def split_listen(listen: str) -> tuple[str, int]:
    host, sep, port = listen.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--listen {listen!r}: write HOST:PORT, e.g. 127.0.0.1:8181")
    return host, int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name that might resolve anywhere


def read_tokens(path: str) -> tuple[str, ...]:
    """The tokens of a file that only its owner may read."""
    try:
        info = os.stat(path)
        with open(path, encoding="utf-8") as f:
            lines = f.read(1024 * 1024).splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"PC530 --token-file {path} cannot be read: {exc}") from None
    if info.st_mode & (stat.S_IRWXO | stat.S_IWGRP):
        # group-readable is allowed: a Kubernetes secret mounted with fsGroup is 0440
        raise UsageError(f"PC530 --token-file {path} is open to others: fix with chmod 600 {path}")
    tokens = tuple(t.strip() for t in lines if t.strip() and not t.startswith("#"))
    if not tokens:
        raise UsageError(f"PC530 --token-file {path} holds no token (one a line)")
    if any(len(t) < 16 for t in tokens):
        raise UsageError(f"PC530 --token-file {path}: every token needs 16 characters or more")
    return tokens


def run(args: argparse.Namespace) -> int:
    try:
        import prometheus_client  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn
    except ImportError as exc:
        raise UsageError(
            f"the decision server needs the `server` extra ({exc.name} is not installed): "
            "pip install 'policyctl[server]'"
        ) from None
    import gc

    gc.enable()  # a long-running process: the one-shot commands' gc.disable does not fit
    host, port = split_listen(args.listen)
    tokens = read_tokens(args.token_file) if args.token_file else ()
    if not tokens and not is_loopback(host):
        raise UsageError(
            f"PC530 --listen {args.listen} is not a loopback address: give --token-file "
            "(clients send `Authorization: Bearer TOKEN`)"
        )
    if args.max_body_bytes < 1024 or args.request_timeout <= 0:
        raise UsageError("--max-body-bytes must be >= 1024 and --request-timeout > 0")
    if args.decision_log not in (None, "-"):
        require_writable_log(args.decision_log, "--decision-log", ", or - for stdout")
    from ..integrations.server.app import ServerConfig, build_app
    from ..integrations.server.metrics import Metrics
    from ..integrations.server.sources import is_url, open_source

    key = _bundle_key(args) if is_url(args.policy) else None

    from ..runtime.store import PolicyStore

    metrics = Metrics()
    source = open_source(args, metrics.reloaded, PolicyStore, key)
    config = ServerConfig(
        tokens=tokens,
        max_body_bytes=args.max_body_bytes,
        request_timeout=args.request_timeout,
        decision_log=args.decision_log,
        log_arguments=args.log_arguments,
    )
    app = build_app(source, config, metrics)
    source.start()
    status = source.snapshot.revision if source.snapshot else "no valid policy yet"
    shown = f"policyctl serve: {source.describe()} ({status}) on http://{args.listen}"
    print(shown, file=sys.stderr)
    try:
        uvicorn.run(app, **uvicorn_options(host, port))
    finally:
        source.stop()
    return 0


def _bundle_key(args: argparse.Namespace) -> bytes:
    """The key a URL's bundles are verified with: anyone who can answer for the URL could
    serve a looser policy, so an unsigned bundle is never pulled."""
    from ..compile.bundlekeys import read_key
    from ..diagnostics import PolicyError
    from ..settings import bundle_key_file

    path = args.bundle_key or bundle_key_file()
    if not path:
        raise UsageError(
            "PC530 --policy URL: a bundle pulled from a URL must be signed; give --bundle-key "
            "FILE (or POLICYCTL_BUNDLE_KEY_FILE), the key `policyctl compile --key` signed with"
        )
    try:
        return read_key(path)
    except PolicyError as exc:
        raise UsageError(f"PC530 --bundle-key {path}: {exc}") from None


def uvicorn_options(host: str, port: int) -> dict[str, Any]:
    return {
        "host": host,
        "port": port,
        "access_log": False,  # the decision log records what matters, without the noise
        "log_level": "warning",
        "timeout_keep_alive": 30,
        "limit_concurrency": 1000,  # beyond it, 503 rather than unbounded memory
        "h11_max_incomplete_event_size": 64 * 1024,  # request line and headers
        "server_header": False,
    }
