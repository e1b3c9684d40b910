"""`policyctl import openclaw.json`: convert an OpenClaw config's tool policy to policyctl YAML."""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from .common import EXIT_OK, EXIT_USAGE, subcommand

HELP = "convert the tool policy of an OpenClaw config (JSON5) into a policyctl YAML file"
EXAMPLE = """examples:
  policyctl import ~/.openclaw/openclaw.json > policy.yaml
  policyctl import openclaw.json -o policy.yaml --catalog openclaw-2026.4
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subcommand(sub, "import", HELP, EXAMPLE)
    p.add_argument("file", help="OpenClaw config (openclaw.json, JSON5 allowed)")
    p.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    p.add_argument("--catalog", default="openclaw", help="catalog to name in the output")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import json5
    from ruamel.yaml import YAML

    from ..importer import import_openclaw

    try:
        text = Path(args.file).read_text(encoding="utf-8")
        config = json5.loads(text)
    except OSError as exc:
        print(f"policyctl import: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return EXIT_USAGE
    except (ValueError, UnicodeDecodeError) as exc:
        print(f"policyctl import: {args.file} is not JSON5: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not isinstance(config, dict):
        print(f"policyctl import: {args.file}: the top level must be an object", file=sys.stderr)
        return EXIT_USAGE
    result = import_openclaw(config)
    doc = {"catalog": args.catalog, **result.document}
    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    out = io.StringIO()
    out.write(
        f"# Imported by policyctl from {Path(args.file).name}.\n"
        "# Check it with: policyctl validate <this file>\n"
    )
    yaml.dump(doc, out)
    if args.output:
        Path(args.output).write_text(out.getvalue(), encoding="utf-8")
    else:
        sys.stdout.write(out.getvalue())
    for path in result.left_out:
        print(f"left out: {path}", file=sys.stderr)
    print(f"imported {args.file}: {len(result.left_out)} section(s) left out", file=sys.stderr)
    return EXIT_OK
