"""`policyctl report POLICY -o report.html`: the policy as one self-contained HTML page.

With `--diff OLD NEW`, the page shows a change: both policies over the union of their
contexts, the cells gained and lost highlighted, the call-rule changes listed.
"""

from __future__ import annotations

import argparse
import os
import sys

from .common import EXIT_OK, EXIT_USAGE, report_failure, subcommand

HELP = "write an HTML report of a policy (or of a change, --diff OLD NEW): matrix, trails, filters"
EXAMPLE = """examples:
  policyctl report examples/team.yaml -o team.html
  policyctl report --diff main:policy.yaml policy.yaml -o change.html

The page is one file (inline style, script and data; no network): open it from disk or
attach it to a pull request next to `policyctl diff --format markdown`.
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subcommand(sub, "report", HELP, EXAMPLE)
    p.add_argument("files", nargs="+", metavar="POLICY", help="policy file (two with --diff)")
    p.add_argument(
        "--diff",
        action="store_true",
        help="compare two policies, OLD NEW (each a file or REV:path for a git revision)",
    )
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the HTML file to write")
    p.add_argument(
        "--max-contexts",
        type=int,
        default=50_000,  # reportdata.DEFAULT_MAX_CONTEXTS (not imported: start-up time)
        metavar="N",
        help="show a deterministic sample beyond N contexts (default 50,000)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..analysis.reportdata import report_data
    from ..analysis.revision import load_revision
    from ..diagnostics import PolicyError
    from ..htmlreport import render_html

    want = 2 if args.diff else 1
    if len(args.files) != want:
        usage = "--diff OLD NEW" if args.diff else "POLICY (or --diff OLD NEW)"
        print(f"policyctl report: expected {usage}, got {len(args.files)} file(s)", file=sys.stderr)
        return EXIT_USAGE
    if args.max_contexts < 1:
        print("policyctl report: --max-contexts must be >= 1", file=sys.stderr)
        return EXIT_USAGE
    policies = []
    for spec in args.files:
        try:
            policies.append(load_revision(spec))
        except PolicyError as exc:
            report_failure(exc, f"{spec}: cannot load")
            return EXIT_USAGE
    if args.diff:
        data = report_data(
            policies[1],
            args.files[1],
            old=policies[0],
            old_name=args.files[0],
            max_contexts=args.max_contexts,
        )
        title = f"policyctl report: {args.files[0]} -> {args.files[1]}"
    else:
        data = report_data(policies[0], args.files[0], max_contexts=args.max_contexts)
        title = f"policyctl report: {args.files[0]}"
    page = render_html(data, title)
    # write next to the target, then rename: a failed run never leaves half a report
    tmp = f"{args.output}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as out:
            out.write(page)
        os.replace(tmp, args.output)
    except OSError as exc:
        print(f"policyctl report: cannot write {args.output}: {exc.strerror}", file=sys.stderr)
        if os.path.exists(tmp):
            os.unlink(tmp)
        return EXIT_USAGE
    shown = len(data["contexts"])
    note = f" (a sample of {data['total']})" if data["sampled"] else ""
    print(f"wrote {args.output}: {shown} contexts{note} x {len(data['tools'])} tools")
    return EXIT_OK
