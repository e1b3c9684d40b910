"""`policyctl simulate FILE --calls calls.jsonl`: replay a transcript of tool calls against a
policy, to see whether yesterday's sessions would break under a new policy."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .common import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, add_context_flags, subcommand

if TYPE_CHECKING:
    from ..analysis.call_corpus import RecordedCall
    from ..context import RunContext
    from ..pipeline.result import Resolution
    from ..runtime.loopdetect import LoopDetector

HELP = (
    "replay recorded tool calls against a policy: allowed, refused (where), denied or asked "
    "by call rules, or vetoed"
)
EXAMPLE = """examples:
  policyctl simulate examples/team.yaml --calls session.jsonl --agent reviewer --provider openai
  policyctl simulate new-policy.yaml --calls session.jsonl --agent coder --format json

The calls file holds JSON lines, or one JSON list, of {"tool": "exec", "args": {...}}
("params" or "arguments" may stand for "args"; "context": {...} decides a call in its own
context instead of the one the flags describe).
Exit 1 when any call would be refused, denied or asked by call rules, or vetoed.
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subcommand(sub, "simulate", HELP, EXAMPLE)
    p.add_argument("file", help="policy file")
    p.add_argument(
        "--calls", required=True, metavar="FILE", help="recorded calls: JSON lines or a JSON list"
    )
    p.add_argument("--format", choices=["text", "json"], default="text")
    add_context_flags(p)
    p.set_defaults(run=run)


def read_calls(path: str) -> list[RecordedCall]:
    """The recorded calls, or exit 2 with every problem located (`analysis.call_corpus`)."""
    from ..analysis.call_corpus import read_corpus
    from ..diagnostics import PolicyError
    from .common import Reported, report_failure

    try:
        return read_corpus(path)
    except PolicyError as exc:
        report_failure(exc, f"{path}: cannot read the recorded calls")
        raise Reported(EXIT_USAGE) from None


def run(args: argparse.Namespace) -> int:
    from ..pipeline.resolve import resolve
    from ..runtime.loopdetect import LoopDetector
    from .common import context_from_args, inventory_from_args, load_or_report, print_json

    calls = read_calls(args.calls)
    policy = load_or_report(args.file)
    base = context_from_args(args)
    inventory = inventory_from_args(args, policy)
    runs: dict[RunContext, Resolution] = {}

    def run_of(call: RecordedCall) -> Resolution:
        # a call that records its own context is decided there, the others in the flags' one
        ctx = call.context.to_run_context() if call.context is not None else base
        if ctx not in runs:
            runs[ctx] = resolve(policy, ctx, inventory, require_tools=False)
        return runs[ctx]

    res = runs[base] = resolve(policy, base, inventory, require_tools=False)
    loop = LoopDetector()
    rows = [_decide(call, run_of(call), loop) for call in calls]
    counts = {k: sum(1 for r in rows if r["verdict"] == k) for k in VERDICTS}
    if args.format == "json":
        print_json({"context": res.context.to_json(), "calls": rows, "summary": counts})
    else:
        names = [shown(row["tool"]) for row in rows]
        width = max((len(name) for name in names), default=4)
        for row, name in zip(rows, names, strict=True):
            print(f"{row['line']:>4}  {name:<{width}}  {_describe(row)}")
        print(
            f"{len(rows)} calls: {counts['allowed']} allowed, {counts['refused']} refused, "
            f"{counts['denied']} denied by call rules, {counts['ask']} need approval, "
            f"{counts['vetoed']} vetoed by loop detection"
        )
    return EXIT_OK if counts["allowed"] == len(rows) else EXIT_FINDINGS


#: what a recorded call gets: its tool refused at name level, the call denied or asked by
#: call rules, vetoed by loop detection, or allowed
VERDICTS = ("allowed", "refused", "denied", "ask", "vetoed")


def _decide(call: RecordedCall, res: Resolution, loop: LoopDetector) -> dict[str, Any]:
    from ..callrules import Effect
    from ..explain.decisions import describe
    from ..explain.tool import decide_tool

    name, params = call.tool, dict(call.args)
    row: dict[str, Any] = {"line": call.line, "tool": name}
    if call.context is not None:  # decided in its own context: say which
        row["context"] = res.context.to_json()
    if not res.is_allowed(name):
        loop.observe(name, params, known=False)
        decision = decide_tool(res, name)
        r = decision.removal
        row["verdict"] = "refused"
        if r is not None:
            row.update(
                {
                    "stage": r.stage,
                    "label": r.label,
                    "kind": r.kind,
                    "entry": r.entry,
                    "source": str(r.source) if r.source else None,
                    "fix": decision.fix,
                }
            )
        else:
            row["reason"] = "no such tool in this run's inventory"
        return row
    verdict = loop.observe(name, params)
    call_decision = res.decide_call(name, params)
    effect = call_decision.verdict.effect
    if effect is not Effect.ALLOW:
        # the runtime's gate decides the call before it runs: a refusal or a question
        row["verdict"] = "denied" if effect is Effect.DENY else "ask"
        row["decidedBy"] = call_decision.verdict.to_json()
        row["why"] = describe(call_decision.verdict)
    elif verdict.level == "critical":
        row.update({"verdict": "vetoed", "detector": verdict.detector, "count": verdict.count})
    else:
        row["verdict"] = "allowed"
        if verdict.level == "warning":
            row["warning"] = verdict.message
    return row


def shown(name: str) -> str:
    """A recorded tool name as the terminal gets it: control characters, surrogates and
    backslashes escaped, so a transcript cannot move the cursor or clear the screen."""
    if name.isprintable() and "\\" not in name:
        return name
    return "".join(
        "\\\\" if ch == "\\" else ch if ch.isprintable() else repr(ch)[1:-1] for ch in name
    )


def _describe(row: dict[str, Any]) -> str:
    from ..escape import printable_line

    if row["verdict"] == "allowed":
        return "allowed" + (f"  ({row['warning']})" if "warning" in row else "")
    if row["verdict"] in ("denied", "ask"):
        label = "DENIED by call rules" if row["verdict"] == "denied" else "NEEDS APPROVAL"
        return f"{label}: {printable_line(row['why'])}"
    if row["verdict"] == "vetoed":
        return f"VETOED by loop detection ({row['detector']}, {row['count']} times)"
    if "stage" not in row:
        return f"REFUSED: {row['reason']}"
    where = "construction" if row["stage"] == 0 else f"layer {row['stage']}"
    rules = {"deny": f'denied by "{row["entry"]}"', "allow": "not in the allow list"}
    src = f" at {row['source']}" if row["source"] else ""
    return f"REFUSED at {where} ({row['label']}): {rules.get(row['kind'], row['kind'])}{src}"
