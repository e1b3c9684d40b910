"""`policyctl schema`: print (or write) the JSON Schema of policy files and catalogs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import EXIT_FINDINGS, EXIT_OK, UsageError, subcommand

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


def _current(path: Path, size: int) -> str | None:
    """What a schema file holds now, None when it is missing or is not what would be written.
    Read with a cap one byte past the new text (a longer file is stale anyway): never a
    FIFO or a device (`files.read_capped`)."""
    from ..files import TooLarge, read_capped

    try:
        return read_capped(path, size + 1).decode("utf-8", errors="replace")
    except (FileNotFoundError, TooLarge):
        return None
    except OSError as exc:  # a FIFO, a device, a folder: not overwritten either
        raise UsageError(f"{path}: {exc.strerror or exc}") from None


def run(args: argparse.Namespace) -> int:
    from ..schemas import SCHEMAS, render

    if not args.output_dir:
        sys.stdout.write(render(args.kind))
        return EXIT_OK
    stale = []
    for kind, (filename, _) in SCHEMAS.items():
        path = Path(args.output_dir) / filename
        text = render(kind)
        current = _current(path, len(text.encode("utf-8")))
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
