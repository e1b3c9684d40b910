"""`policyctl schema`: print (or write) the JSON Schema of policy files and catalogs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import EXIT_FINDINGS, EXIT_OK, subcommand

HELP = "print the JSON Schema of policy files (for editors and CI validators)"
EXAMPLE = """examples:
  policyctl schema > policy.schema.json
  policyctl schema --kind catalog
  policyctl schema --output-dir schemas          # regenerate the committed schemas
  policyctl schema --output-dir schemas --check  # fail when they are stale
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from ..schemas import SCHEMAS

    p = subcommand(sub, "schema", HELP, EXAMPLE)
    p.add_argument("--kind", choices=sorted(SCHEMAS), default="policy")
    p.add_argument("--output-dir", metavar="DIR", help="write every schema file into DIR")
    p.add_argument("--check", action="store_true", help="with --output-dir: exit 1 if stale")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..schemas import SCHEMAS, render

    if not args.output_dir:
        sys.stdout.write(render(args.kind))
        return EXIT_OK
    stale = []
    for kind, (filename, _) in SCHEMAS.items():
        path = Path(args.output_dir) / filename
        text = render(kind)
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current != text:
            stale.append(str(path))
            if not args.check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    if args.check and stale:
        print(
            "stale schema files: "
            + ", ".join(stale)
            + " (run: policyctl schema --output-dir schemas)",
            file=sys.stderr,
        )
        return EXIT_FINDINGS
    for written in stale:
        print(f"wrote {written}", file=sys.stderr)
    return EXIT_OK
