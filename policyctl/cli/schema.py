"""`policyctl schema`: print (or write) the JSON Schema of policy files and catalogs.

The schemas policyctl publishes are committed under schemas/; a test checks them for drift."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from .common import EXIT_FINDINGS, EXIT_OK, UsageError, subcommand

HELP = "print the JSON Schema of policy files (for editors and CI validators)"
EXAMPLE = """examples:
  policyctl schema > policy.schema.json
  policyctl schema --kind catalog
  policyctl schema --output-dir schemas          # regenerate the committed schemas
  policyctl schema --output-dir schemas --check  # fail when they are stale
"""


def _policy() -> dict[str, object]:
    from ..catalog.load import builtin_catalog
    from ..catalog.model import BUILTIN_CATALOGS
    from ..document.model import document_json_schema

    # profile -> the built-in catalogs that have it, so hover says where a name is valid
    profiles: dict[str, list[str]] = {}
    for name in BUILTIN_CATALOGS:
        for profile in builtin_catalog(name).profiles:
            profiles.setdefault(profile, []).append(name)
    everywhere = [p for p, cats in profiles.items() if len(cats) == len(BUILTIN_CATALOGS)]
    some = [f"{p} ({', '.join(cats)})" for p, cats in profiles.items() if p not in everywhere]
    note = "built in: " + ", ".join(everywhere) + (" in every catalog; " if some else "")
    note += ", ".join(some)
    return document_json_schema(sorted(profiles), BUILTIN_CATALOGS, note)


def _catalog() -> dict[str, object]:
    from ..catalog.file import CatalogFile

    schema = CatalogFile.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "policyctl catalog"
    return schema


def _commands() -> dict[str, object]:
    from ..catalog.commandfile import CommandsFile

    schema = CommandsFile.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "policyctl command catalog"
    return schema


def _policy_test() -> dict[str, object]:
    from ..analysis.testing import policy_test_schema

    return policy_test_schema()


SCHEMAS: dict[str, tuple[str, Callable[[], dict[str, object]]]] = {
    "policy": ("policy.schema.json", _policy),
    "catalog": ("catalog.schema.json", _catalog),
    "commands": ("commands.schema.json", _commands),
    "policy-test": ("policy-test.schema.json", _policy_test),
}


def render(kind: str) -> str:
    """Stable text: sorted keys, two-space indent, trailing newline."""
    return json.dumps(SCHEMAS[kind][1](), indent=2, sort_keys=True) + "\n"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subcommand(sub, "schema", HELP, EXAMPLE)
    p.add_argument("--kind", choices=sorted(SCHEMAS), default="policy")
    p.add_argument("--output-dir", metavar="DIR", help="write every schema file into DIR")
    p.add_argument("--check", action="store_true", help="with --output-dir: exit 1 if stale")
    p.set_defaults(run=run)


def _current(path: Path, size: int) -> str | None:
    """What a schema file holds now, None when it is missing or is not what would be written.
    Read with a cap one byte past the new text (a longer file is stale anyway): never a
    FIFO or a device (`files.read_capped`)."""
    from ..formats.files import TooLarge, read_capped

    try:
        return read_capped(path, size + 1).decode("utf-8", errors="replace")
    except (FileNotFoundError, TooLarge):
        return None
    except OSError as exc:  # a FIFO, a device, a folder: not overwritten either
        raise UsageError(f"{path}: {exc.strerror or exc}") from None


def run(args: argparse.Namespace) -> int:
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
