"""`policyctl fmt FILE...`: canonical formatting that keeps comments; `--check` for CI."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, subcommand

HELP = "format policy files canonically, keeping comments (YAML and JSON)"
EXAMPLE = """examples:
  policyctl fmt policy.yaml
  policyctl fmt --check policies/*.yaml      # exit 1 when a file would change
  policyctl fmt --migrate policy.yaml        # also rewrite agents.list into agents.entries
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subcommand(sub, "fmt", HELP, EXAMPLE)
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 if a file would change"
    )
    p.add_argument("--migrate", action="store_true", help="rewrite legacy shapes (agents.list)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..diagnostics import PolicyError
    from ..fmt import format_text
    from ..loader import read_text
    from ..settings import default_limits
    from .output import render_diagnostics

    changed: list[str] = []
    failed = False
    for name in args.files:
        try:
            text = read_text(Path(name), default_limits(), name)
            formatted = format_text(text, name, migrate=args.migrate)
        except PolicyError as exc:
            print(render_diagnostics(exc.diagnostics, sys.stderr), file=sys.stderr)
            failed = True
            continue
        if formatted == text:
            continue
        changed.append(name)
        if args.check:
            print(f"would reformat {name}")
        else:
            Path(name).write_text(formatted, encoding="utf-8")
            print(f"reformatted {name}")
    if failed:
        return EXIT_USAGE
    if args.check and changed:
        return EXIT_FINDINGS
    if not changed:
        print(f"{len(args.files)} file{'s' * (len(args.files) != 1)} already formatted")
    return EXIT_OK
