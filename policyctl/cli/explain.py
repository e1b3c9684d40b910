"""`policyctl explain FILE --tool NAME`: why a tool is allowed or gone, and what to edit.

With `--call JSON`, the decision for one call of the tool (allow, ask or deny) with the layer,
entry and file:line:col that decided, and every layer's verdict.

`policyctl explain CODE` explains a diagnostic code instead.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .common import EXIT_OK, EXIT_USAGE, UsageError, add_context_flags, subcommand

if TYPE_CHECKING:
    from ..explain.tool import ToolDecision
    from ..pipeline.result import RemovedTool, Resolution
    from .output import Painter

HELP = "explain why a tool is allowed or removed in a run (or explain a diagnostic code)"
EXAMPLE = """examples:
  policyctl explain examples/team.yaml --agent coder --tool exec
  policyctl explain examples/team.yaml --agent coder --tool exec --trail
  policyctl explain policy.yaml --tool exec --call '{"command": "git push origin main"}'
  policyctl explain examples/chatbot.yaml --session-key agent:support:slack:group:C123
  policyctl explain PC303
"""
_CODE = re.compile(r"PC\d{3}\Z", re.IGNORECASE)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subcommand(sub, "explain", HELP, EXAMPLE)
    p.add_argument("file", help="policy file, or a diagnostic code such as PC303")
    p.add_argument("--tool", dest="explain_tool", metavar="NAME", help="the tool to explain")
    p.add_argument("--trail", action="store_true", help="show all eleven layers")
    p.add_argument(
        "--call",
        metavar="JSON",
        help="with --tool: the arguments of one call, as a JSON object; shows the call rules' "
        "decision (allow, ask, deny) and which layer and entry decided",
    )
    p.add_argument("--format", choices=["text", "json"], default="text")
    add_context_flags(p, tool_flag=False)
    p.set_defaults(run=run)


def explain_code(code: str) -> int:
    from ..diagnostics import CODES

    info = CODES.get(code.upper())
    if info is None:
        print(f"unknown diagnostic code {code}", file=sys.stderr)
        return EXIT_USAGE
    print(f"{info.code} ({info.severity.value}): {info.title}\n\n{info.explanation}")
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    if _CODE.match(args.file) and not Path(args.file).exists():
        return explain_code(args.file)
    from ..explain.tool import decide_tool, sandbox_refusal, summary_line
    from ..names import fold
    from .common import print_json
    from .output import Painter
    from .resolve import print_context_warnings, resolve_for_cli

    call_args = None
    if args.call is not None:
        from ..explain.call import CallArgumentsError, parse_call

        if args.explain_tool is None:
            raise UsageError("--call needs --tool NAME: the tool the call is made to")
        try:
            call_args = parse_call(args.call)
        except CallArgumentsError as exc:
            raise UsageError(str(exc)) from None
    policy, res = resolve_for_cli(args)
    paint = Painter(sys.stdout)
    print_context_warnings(res, args.format)  # a typo in the context: say so first
    if args.explain_tool is None:
        if args.format == "json":
            print_json(res.to_json())
            return EXIT_OK
        if not res.removed:
            print("no tool is removed in this run")
        current = None
        for r in res.removed:
            header = "construction" if r.stage == 0 else f"layer {r.stage}: {r.label}"
            if header != current:
                print(paint(header, "bold"))
                current = header
            print(f"  {summary_line(r)}")
        if args.trail:
            _print_trail(res, None, paint)
        return EXIT_OK
    if call_args is not None:
        from ..explain.call import explain_call

        explained = explain_call(res, args.explain_tool, call_args)
        if args.format == "json":
            print_json({"context": res.context.to_json(), "call": explained.to_json()})
        else:
            print(explained.render())
        return EXIT_OK
    decision = decide_tool(res, args.explain_tool, policy)
    if args.format == "json":
        out = res.to_json()
        out["decision"] = (
            {"tool": decision.tool, "allowed": True}
            if decision.allowed
            else decision.removal.to_json()
            if decision.removal
            else {"tool": decision.tool, "allowed": False, "inInventory": False}
        )
        if decision.blockers:
            out["blockers"] = [b.to_json() for b in decision.blockers]
            out["fixes"] = list(decision.fixes)
        if decision.fix:
            out["fix"] = decision.fix
        print_json(out)
        return EXIT_OK
    if decision.asked is not None and fold(decision.asked) != decision.tool:
        print(f'"{decision.asked}" is an alias of {decision.tool}')
    if decision.allowed:
        print(f"{decision.tool}: {paint('ALLOWED', 'green')} in this run")
    elif decision.removal is None:
        print(f"{decision.tool}: {paint('NOT IN INVENTORY', 'yellow')}: {decision.fix}")
    else:
        _print_removal(decision, paint)
        refusal = sandbox_refusal(res, decision.tool, policy)
        if refusal:
            print("\n" + refusal)
    if args.trail:
        _print_trail(res, decision.tool, paint)
    return EXIT_OK


def _print_blocker(r: RemovedTool) -> None:
    if r.kind == "deny":
        via = f" (expands to {r.tool})" if r.expanded_from else ""
        written = f', written "{r.written_as}"' if r.written_as and r.written_as != r.entry else ""
        print(f'  rule:  deny entry "{r.entry}"{via}{written}')
    elif r.kind == "allow":
        print(f"  rule:  not matched by the allow list {r.scope}")
    else:
        print(f"  rule:  {r.kind}")
    if r.source is not None:
        print(f"  where: {r.source}")
        from .output import _source_lines

        lines = _source_lines(r.source.file)
        if 0 < r.source.line <= len(lines):
            print(f"         {lines[r.source.line - 1].strip()}")


def _print_removal(decision: ToolDecision, paint: Painter) -> None:
    r = decision.removal
    assert r is not None
    stage = "construction" if r.stage == 0 else f"layer {r.stage}"
    print(f"{decision.tool}: {paint('REMOVED', 'red')} at {stage} ({r.label})")
    _print_blocker(r)
    later = decision.blockers[1:]
    if later:
        print(f"  also removed by {len(later)} more rule(s), each of which must change too:")
        for b in later:
            where = "construction" if b.stage == 0 else f"layer {b.stage}"
            print(f"  - {where} ({b.label})")
            _print_blocker(b)
    if len(decision.fixes) > 1:
        print(f"  {paint('fix:', 'green')}   all of these edits:")
        for f in decision.fixes:
            print(f"         - {f}")
    else:
        print(f"  {paint('fix:', 'green')}   {decision.fix}")


def _by_list(res: Resolution, removed: tuple[str, ...]) -> str:
    """` (screen, canvas by tools.deny; browser)`: the tools a layer removed, each deny list
    that removed some named after them (the layer's label names its allow list)."""
    if not removed:
        return ""
    groups: dict[str | None, list[str]] = {}
    for name in removed:
        gone = res.removal(name)
        groups.setdefault(gone.label if gone and gone.kind == "deny" else None, []).append(name)
    parts = [
        ", ".join(names) + (f" by {label}" if label else "") for label, names in groups.items()
    ]
    return f" ({'; '.join(parts)})"


def _print_trail(res: Resolution, tool: str | None, paint: Painter) -> None:
    print(paint("trail:", "bold"))
    gone = res.removal(tool) if tool else None
    gone_at = gone.stage if gone else None
    if gone_at == 0:
        print(f"  [ 0] construction: removed {tool}")
    for layer in res.layers:
        head = f"  [{layer.stage:>2}] {layer.label}"
        if not layer.applied:
            print(f"{head}: skipped ({layer.skip_reason})")
        elif tool is None:
            print(f"{head}: applied, removed {len(layer.removed)}" + _by_list(res, layer.removed))
        elif gone_at is not None and layer.stage > gone_at:
            print(f"{head}: applied (tool already removed)")
        elif tool in layer.removed and gone is not None:
            # the list that removed it (`tools.deny`), not the layer's allow label
            print(f"  [{layer.stage:>2}] {gone.label}: applied, {paint('removed ' + tool, 'red')}")
        else:
            print(f"{head}: applied, kept {tool}")
        if layer.detail:  # which of several rules applied, and which it shadowed
            print(f"       {layer.detail}")
