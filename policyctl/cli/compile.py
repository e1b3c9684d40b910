"""`policyctl compile FILE -o bundle.json`: a deterministic bundle the runtime loads directly."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, report_failure, subcommand

HELP = "compile a policy into a deterministic JSON bundle (or check that a bundle is fresh)"
EXAMPLE = """examples:
  policyctl compile examples/team.yaml -o team.bundle.json
  policyctl compile --check team.bundle.json examples/team.yaml   # exit 1 when stale
  policyctl compile examples/team.yaml --key bundle.key -o team.bundle.json   # signed

A signed bundle carries an HMAC-SHA256 signature under the key file; wherever a key is
configured (POLICYCTL_BUNDLE_KEY_FILE), only bundles signed with it are loaded.
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subcommand(sub, "compile", HELP, EXAMPLE)
    p.add_argument("file", help="policy file")
    p.add_argument("-o", "--output", metavar="BUNDLE", help="write here (default: stdout)")
    p.add_argument("--check", metavar="BUNDLE", help="tell whether BUNDLE matches FILE")
    p.add_argument(
        "--key",
        metavar="KEYFILE",
        help="sign the bundle with this HMAC key (default: POLICYCTL_BUNDLE_KEY_FILE, if set)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:

    from ..api import compile_loaded
    from ..compile.bundle import build_bundle, render_bundle, sign_bundle
    from ..compile.bundlekeys import configured_key, key_file_warnings, read_key
    from ..compile.bundleread import read_bundle
    from ..diagnostics import PolicyError
    from ..document.extends import load_document
    from ..settings import bundle_key_file
    from .output import count_summary, render_diagnostics

    try:
        loaded = load_document(args.file)
        bundle = build_bundle(loaded, compile_loaded(loaded))
        key = read_key(args.key) if args.key else configured_key()
        key_path = args.key or (bundle_key_file() if key is not None else None)
    except PolicyError as exc:
        report_failure(exc, f"{args.file}: invalid policy ({count_summary(exc.diagnostics)})")
        return EXIT_USAGE
    if args.check:
        try:
            # read as bundles are loaded: a regular file, capped, parsed with the node caps
            _, existing, _ = read_bundle(args.check)
        except PolicyError as exc:
            report_failure(exc, f"{args.check}: cannot read the bundle")
            return EXIT_USAGE
        if existing.get("contentHash") == bundle["contentHash"]:
            print(f"{args.check} is up to date ({bundle['hash'][:19]}…)")
            return EXIT_OK
        print(
            f"{args.check} is stale: recompile with "
            f"`policyctl compile {args.file} -o {args.check}`",
            file=sys.stderr,
        )
        return EXIT_FINDINGS
    if key_path:
        warnings = key_file_warnings(key_path)
        if warnings:
            print(render_diagnostics(warnings, sys.stderr), file=sys.stderr)
    text = render_bundle(sign_bundle(bundle, key) if key is not None else bundle)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output} ({bundle['hash'][:19]}…)", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return EXIT_OK
