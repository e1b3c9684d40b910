"""`policyctl validate FILE...`: every problem of every file in one run, for CI and editors."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from .common import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, add_sarif_root_flag, subcommand

if TYPE_CHECKING:
    from ..diagnostics import Diagnostic

HELP = "check policy files: schema, semantics, unknown names, empty tool sets"
EXAMPLE = """examples:
  policyctl validate policies/*.yaml
  policyctl validate --strict --format sarif policy.yaml > policyctl.sarif
  policyctl validate --format github --fail-on warning policy.yaml
"""
_UNREADABLE = {"PC101", "PC102", "PC106"}


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subcommand(sub, "validate", HELP, EXAMPLE)
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--format", choices=["text", "json", "sarif", "github"], default="text")
    p.add_argument("--strict", action="store_true", help="unknown names are errors")
    p.add_argument(
        "--fail-on",
        choices=["error", "warning", "info"],
        default="error",
        help="exit 1 when a finding at or above this severity exists (default error)",
    )
    p.add_argument(
        "--max-errors",
        type=int,
        default=50,
        metavar="N",
        help="show at most N findings (default 50; 0 for all)",
    )
    p.add_argument(
        "--max-contexts",
        type=int,
        default=10_000,  # matrix.DEFAULT_MAX_CONTEXTS (not imported: start-up time)
        metavar="N",
        help="contexts to check for empty tool sets before sampling (default 10,000)",
    )
    add_sarif_root_flag(p)
    p.set_defaults(run=run)


def validate_file(path: str, strict: bool, max_contexts: int) -> list[Diagnostic]:
    """Every diagnostic of one file (see `policyctl.analysis.validate`)."""
    from ..analysis.validate import validate_path

    return validate_path(path, strict=strict, max_contexts=max_contexts)


def run(args: argparse.Namespace) -> int:
    from ..diagnostics import Diagnostic, Severity
    from . import report

    if args.max_errors < 0 or args.max_contexts < 1:
        print(
            "policyctl validate: --max-errors must be >= 0 and --max-contexts >= 1", file=sys.stderr
        )
        return EXIT_USAGE
    found: list[Diagnostic] = []
    for path in args.files:
        found.extend(validate_file(path, args.strict, args.max_contexts))
    found = sorted(dict.fromkeys(found), key=Diagnostic.sort_key)
    shown = found if args.max_errors == 0 else found[: args.max_errors]
    hidden = len(found) - len(shown)
    if args.format == "json":
        sys.stdout.write(report.render_json(shown, args.files, hidden, found))
    elif args.format == "sarif":
        sys.stdout.write(report.render_sarif(shown, args.sarif_root))
    elif args.format == "github":
        sys.stdout.write(report.render_github(shown))
    else:
        sys.stdout.write(report.render_text(shown, args.files, hidden, found))
    if any(d.code in _UNREADABLE for d in found):
        return EXIT_USAGE
    threshold = Severity(args.fail_on).rank
    return EXIT_FINDINGS if any(d.severity.rank >= threshold for d in found) else EXIT_OK
