"""`policyctl test FILE...`: run policy test files (cases and invariants), like pytest."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from .common import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    add_sarif_root_flag,
    report_failure,
    subcommand,
)

if TYPE_CHECKING:
    from ..analysis.testing import FileResult

HELP = "run policy test files: expected tools per context, invariants over the context matrix"
EXAMPLE = """examples:
  policyctl test examples/*.test.yaml
  policyctl test --coverage --min-coverage 80 policies/team.test.yaml
  policyctl test --format junit examples/team.test.yaml > policy-tests.xml
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subcommand(sub, "test", HELP, EXAMPLE)
    p.add_argument("files", nargs="+", metavar="FILE", help="policy test files (YAML or TOML)")
    p.add_argument("--format", choices=["text", "junit", "sarif"], default="text")
    p.add_argument(
        "--coverage",
        action="store_true",
        help="report which policy entries decided at least one case",
    )
    p.add_argument(
        "--min-coverage",
        type=float,
        metavar="PERCENT",
        help="fail when entry coverage is below PERCENT (implies --coverage)",
    )
    p.add_argument(
        "--max-contexts",
        type=int,
        # invariants.INVARIANT_MAX_CONTEXTS (not imported: start-up time); a context costs
        # its layer plans, each distinct run is resolved once
        default=250_000,
        metavar="N",
        help="contexts of the matrix to check invariants on before sampling (default 250,000)",
    )
    p.add_argument(
        "--allow-sampled",
        action="store_true",
        help="accept an invariant checked on a sample of the matrix (more contexts than "
        "--max-contexts) as a pass; without it such an invariant is INCONCLUSIVE and fails",
    )
    add_sarif_root_flag(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..analysis.testing import run_test_file
    from ..diagnostics import PolicyError
    from .output import Painter

    if args.max_contexts < 1:  # an invariant checked on zero contexts would pass anything
        print("policyctl test: --max-contexts must be >= 1", file=sys.stderr)
        return EXIT_USAGE
    coverage = args.coverage or args.min_coverage is not None
    results: list[FileResult] = []
    broken = False
    for path in args.files:
        try:
            results.append(
                run_test_file(
                    path,
                    max_contexts=args.max_contexts,
                    coverage=coverage,
                    allow_sampled=args.allow_sampled,
                )
            )
        except PolicyError as exc:
            report_failure(exc, f"{path}: cannot run (invalid test file or policy)")
            broken = True
    if args.format == "junit":
        sys.stdout.write(render_junit(results))
    elif args.format == "sarif":
        sys.stdout.write(render_sarif(results, args.sarif_root))
    else:
        sys.stdout.write(render_text(results, Painter(sys.stdout), coverage))
    if broken:
        return EXIT_USAGE
    failed = sum(r.failed for r in results)
    if args.min_coverage is not None:
        total = sum(len(r.entries) for r in results)
        covered = total - sum(len(r.uncovered()) for r in results)
        percent = 100.0 * covered / total if total else 100.0
        if percent < args.min_coverage:
            print(
                f"entry coverage {percent:.1f}% is below --min-coverage {args.min_coverage:g}%",
                file=sys.stderr,
            )
            return EXIT_FINDINGS
    return EXIT_FINDINGS if failed else EXIT_OK


def render_text(results: list[FileResult], paint: Any, coverage: bool) -> str:
    lines: list[str] = []
    passed = failed = inconclusive = 0
    for fr in results:
        lines.append(paint(fr.path, "bold") + f" (policy {fr.policy_path})")
        for r in fr.results:
            label = "invariant " if r.kind == "invariant" else ""
            if r.inconclusive:
                inconclusive += 1
                lines.append(
                    f"  {paint('INCONCLUSIVE', 'red')} {label}{r.name}: no violation in the "
                    f"{r.sample} contexts sampled, which does not show it holds in the others "
                    "(raise --max-contexts to check them all, or --allow-sampled to accept)"
                )
            elif r.passed:
                passed += 1
                note = (
                    f" (only {r.sample} contexts sampled, accepted by --allow-sampled)"
                    if r.sample
                    else ""
                )
                lines.append(f"  {paint('PASS', 'green')} {label}{r.name}{note}")
            else:
                failed += 1
                where = f" ({r.source})" if r.source else ""
                lines.append(f"  {paint('FAIL', 'red')} {label}{r.name}{where}")
                lines.extend(f"       {f}" for f in r.failures[:20])
                if len(r.failures) > 20:
                    lines.append(f"       ... {len(r.failures) - 20} more lines")
        if fr.contexts_total:
            sampled = (
                f" of {fr.contexts_total} (sampled)"
                if fr.contexts_total > fr.contexts_checked
                else ""
            )
            lines.append(f"  invariants checked on {fr.contexts_checked}{sampled} contexts")
        if coverage:
            total = len(fr.entries)
            uncovered = fr.uncovered()
            percent = 100.0 * (total - len(uncovered)) / total if total else 100.0
            lines.append(
                f"  coverage: {total - len(uncovered)} of {total} policy entries decided "
                f"at least one case ({percent:.1f}%)"
            )
            for entry in uncovered:
                lines.append(
                    f'    never decided: "{entry.raw.strip()}" {entry.key} ({entry.source})'
                )
    lines.append(
        f"{passed} passed, {failed} failed"
        + (f", {inconclusive} inconclusive (sampled)" if inconclusive else "")
    )
    return "\n".join(lines) + "\n"


def render_junit(results: list[FileResult]) -> str:
    # xml.sax.saxutils pulls in urllib.request and http.client (~50 ms): only for junit
    from xml.sax.saxutils import escape, quoteattr

    out = ['<?xml version="1.0" encoding="UTF-8"?>']
    total = sum(len(fr.results) for fr in results)
    failures = sum(fr.failed for fr in results)
    out.append(f'<testsuites name="policyctl" tests="{total}" failures="{failures}">')
    for fr in results:
        out.append(
            f'  <testsuite name={quoteattr(fr.path)} tests="{len(fr.results)}" '
            f'failures="{fr.failed}">'
        )
        for r in fr.results:
            name = quoteattr(("invariant " if r.kind == "invariant" else "") + r.name)
            head = f"    <testcase classname={quoteattr(fr.path)} name={name}"
            if r.passed:
                out.append(head + "/>")
            else:
                lines = r.failures or [_inconclusive_message(r)]
                out.append(head + ">")
                out.append(
                    f"      <failure message={quoteattr(lines[0])}>"
                    f"{escape(chr(10).join(lines))}</failure>"
                )
                out.append("    </testcase>")
        out.append("  </testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"


def render_sarif(results: list[FileResult], root: str | None = None) -> str:
    from .report import sarif_log, sarif_result

    rules = [
        {
            "id": "PT001",
            "name": "PolicyTestCaseFailed",
            "shortDescription": {"text": "policy test case failed"},
            "fullDescription": {
                "text": "A case of a policy test file does not hold: a tool it "
                "expects denied is allowed, or the other way round."
            },
            "defaultConfiguration": {"level": "error"},
        },
        {
            "id": "PT002",
            "name": "PolicyInvariantViolated",
            "shortDescription": {"text": "policy invariant violated"},
            "fullDescription": {
                "text": "An invariant of a policy test file does not hold in some "
                "context of the policy's context matrix."
            },
            "defaultConfiguration": {"level": "error"},
        },
        {
            "id": "PT003",
            "name": "PolicyInvariantInconclusive",
            "shortDescription": {"text": "policy invariant checked on a sample only"},
            "fullDescription": {
                "text": "The context matrix has more contexts than --max-contexts, so the "
                "invariant was checked on a sample: no violation there does not show it "
                "holds. Raise --max-contexts, or accept with --allow-sampled."
            },
            "defaultConfiguration": {"level": "error"},
        },
    ]
    found = [
        sarif_result(
            "PT003" if r.inconclusive else "PT001" if r.kind == "case" else "PT002",
            2 if r.inconclusive else 0 if r.kind == "case" else 1,
            "error",
            f"{r.name}: " + ("; ".join(r.failures[:5]) or _inconclusive_message(r)),
            r.source,
            root,
        )
        for fr in results
        for r in fr.results
        if not r.passed
    ]
    return sarif_log(rules, found, root)


def _inconclusive_message(r: Any) -> str:
    return (
        f"inconclusive: no violation in the {r.sample} contexts sampled, which does not show "
        "the invariant holds (raise --max-contexts, or accept with --allow-sampled)"
    )
