"""`policyctl diff OLD NEW`: which contexts gain or lose which tools, and through which rule."""

from __future__ import annotations

import argparse
import json
import sys

from .common import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, report_failure, subcommand

HELP = (
    "compare two policies over their context matrices: tools gained and lost, call rules "
    "changed, and why"
)
EXAMPLE = """examples:
  policyctl diff old.yaml new.yaml
  policyctl diff HEAD~1:policies/team.yaml policies/team.yaml --fail-on-widen
  policyctl diff main:policy.yaml policy.yaml --format markdown > comment.md
  policyctl diff old.yaml new.yaml --calls session.jsonl --workspace /srv/repo --fail-on-widen

A call-rule change widens when it can let a call through that did not get through: a deny
or ask rule removed, an allow rule added where the tool is admitted by specifiers only, a
plain-name ask removed, callDefault relaxed from deny to ask. With --calls, every recorded
call is decided by both policies; deny -> ask, deny -> allow and ask -> allow widen.
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subcommand(sub, "diff", HELP, EXAMPLE)
    p.add_argument("old", help="old policy: a file, or REV:path for a git revision of it")
    p.add_argument("new", help="new policy file (or REV:path)")
    p.add_argument("--format", choices=["text", "json", "markdown"], default="text")
    p.add_argument(
        "--fail-on-widen",
        action="store_true",
        help="exit 1 if any context gains a tool, a call-rule change widens, or a recorded "
        "call (--calls) is decided deny -> ask, deny -> allow or ask -> allow (a CI guard for "
        "loosening changes); also when the matrix was sampled and no widening found, unless "
        "--allow-sampled",
    )
    p.add_argument(
        "--allow-sampled",
        action="store_true",
        help="with --fail-on-widen, accept a sampled comparison that finds no widening",
    )
    p.add_argument(
        "--max-contexts",
        type=int,
        default=10_000,  # matrix.DEFAULT_MAX_CONTEXTS (not imported: start-up time)
        metavar="N",
        help="compare a deterministic sample beyond N contexts (default 10,000)",
    )
    p.add_argument(
        "--calls",
        metavar="FILE",
        help="recorded calls (JSON lines or a JSON list of {tool, args, context?}) decided by "
        "both policies: a call without a context is decided in every compared context",
    )
    p.add_argument(
        "--workspace", metavar="DIR", help="the workspace of the compared runs (path rules)"
    )
    p.add_argument("--home", metavar="DIR", help="the home directory of the compared runs")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..analysis.diff import diff_policies, render_markdown, render_text
    from ..analysis.revision import load_revision
    from ..diagnostics import PolicyError

    if args.max_contexts < 1:  # zero contexts compared would be "not widened" for any change
        print("policyctl diff: --max-contexts must be >= 1", file=sys.stderr)
        return EXIT_USAGE
    calls = None
    if args.calls is not None:
        from ..analysis.call_corpus import read_corpus

        try:
            calls = read_corpus(args.calls)
        except PolicyError as exc:
            report_failure(exc, f"{args.calls}: cannot read the recorded calls")
            return EXIT_USAGE
    policies = []
    for spec in (args.old, args.new):
        try:
            policies.append(load_revision(spec))
        except PolicyError as exc:
            report_failure(exc, f"{spec}: cannot load")
            return EXIT_USAGE
    result = diff_policies(
        policies[0],
        policies[1],
        old_name=args.old,
        new_name=args.new,
        max_contexts=args.max_contexts,
        calls=calls,
        workspace=args.workspace,
        home=args.home,
    )
    if args.format == "json":
        sys.stdout.write(json.dumps(result.to_json(), indent=2) + "\n")
    elif args.format == "markdown":
        sys.stdout.write(render_markdown(result))
    else:
        sys.stdout.write(render_text(result))
    if args.fail_on_widen and (result.widened or not (result.conclusive or args.allow_sampled)):
        return EXIT_FINDINGS  # a sample that finds no widening does not pass the gate
    return EXIT_OK
