"""`policyctl fmt FILE...`: canonical formatting that keeps comments; `--check` for CI."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, subcommand

HELP = "format policy files canonically, keeping comments (YAML and JSON; TOML is only checked)"
EXAMPLE = """examples:
  policyctl fmt policy.yaml
  policyctl fmt --check policies/*.yaml      # exit 1 when a file would change
  policyctl fmt --migrate policy.yaml        # also rewrite agents.list into agents.entries
  policyctl fmt --check policies/*            # TOML files are checked for syntax, left as written
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
    from ..formats.fmt import format_text, toml_needs_manual_migration
    from ..formats.read import detect_format, read_text
    from ..settings import default_limits
    from .output import render_diagnostics

    changed: list[str] = []
    left_as_written = 0
    failed = False
    for name in args.files:
        try:
            text = read_text(Path(name), default_limits(), name)
            formatted = format_text(text, name, migrate=args.migrate)
            legacy_toml = (
                args.migrate
                and detect_format(name) == "toml"
                and toml_needs_manual_migration(text, name)
            )
        except PolicyError as exc:
            print(render_diagnostics(exc.diagnostics, sys.stderr), file=sys.stderr)
            failed = True
            continue
        if legacy_toml:
            # Not rewritten, and not "already formatted" either: the legacy shape is still there.
            changed.append(name)
            print(
                f"{name}: agents.list must be migrated by hand in TOML: write each "
                "[[agents.list]] item as an [agents.entries.<id>] table",
                file=sys.stderr,
            )
            continue
        if detect_format(name) == "toml":
            print(f"{name}: left as written (fmt rewrites YAML and JSON; TOML is only checked)")
            left_as_written += 1
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
    if changed and (args.check or any(detect_format(n) == "toml" for n in changed)):
        return EXIT_FINDINGS
    formatted_count = len(args.files) - left_as_written
    if not changed and formatted_count:
        print(f"{formatted_count} file{'s' * (formatted_count != 1)} already formatted")
    return EXIT_OK
