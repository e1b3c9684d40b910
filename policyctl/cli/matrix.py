"""`policyctl matrix FILE`: the contexts a policy can tell apart, and each tool's fate in each.

`--agent` keeps the rows of some agents, `--tool` the columns of some tools, and
`--changed-only` the rows whose tools differ from their agent's baseline run: the run with
no provider, no channel, the main session, an anonymous sender, not the owner, a user turn
(the baseline rows themselves are always printed, first, as the reference).

A tool that is allowed and whose calls call rules decide is `ok+` (text and CSV); the JSON
rows also list, per such tool, the layers whose call rules apply (`callRules`).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from typing import TYPE_CHECKING

from .common import EXIT_OK, EXIT_USAGE, UsageError, subcommand

if TYPE_CHECKING:
    from ..analysis.matrix import MatrixContext
    from ..compile.compiled import CompiledPolicy
    from ..pipeline.result import Resolution

HELP = "print the context matrix: every distinct context x tool, allowed or removed at a layer"
EXAMPLE = """examples:
  policyctl matrix examples/chatbot.yaml
  policyctl matrix examples/team.yaml --format csv > matrix.csv
  policyctl matrix examples/team.yaml --agent coder --tool exec --tool write --changed-only
"""
NO_AGENT = "(none)"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subcommand(sub, "matrix", HELP, EXAMPLE)
    p.add_argument("file", help="policy file")
    p.add_argument("--format", choices=["text", "json", "csv"], default="text")
    p.add_argument(
        "--max-contexts",
        type=int,
        default=2000,
        metavar="N",
        help="sample deterministically beyond N contexts",
    )
    p.add_argument(
        "--agent",
        action="append",
        metavar="ID",
        help=f"only this agent's rows (repeatable; {NO_AGENT} for runs without an agent)",
    )
    p.add_argument(
        "--tool", action="append", metavar="NAME", help="only this tool's column (repeatable)"
    )
    p.add_argument(
        "--summary",
        action="store_true",
        help="per agent, the tools it has in every, some or no context (fits 120 columns)",
    )
    p.add_argument(
        "--changed-only",
        action="store_true",
        help="only the rows that differ from their agent's baseline run (no provider, no "
        "channel, main session, anonymous, not the owner, a user turn)",
    )
    p.set_defaults(run=run)


#: an allowed tool whose calls are decided by call rules in this context
WITH_CALL_RULES = "ok+"


def _cell(res: Resolution, tool: str, ruled: dict[str, list[str]]) -> str:
    if res.is_allowed(tool):
        return WITH_CALL_RULES if tool in ruled else "ok"
    removal = res.removal(tool)
    return "-" if removal is None else ("C" if removal.stage == 0 else f"L{removal.stage}")


def _call_rule_layers(res: Resolution, tools: list[str]) -> dict[str, list[str]]:
    """tool -> the labels of the layers that have call rules for it, in layer order."""
    out: dict[str, list[str]] = {}
    for layer in res.call_layers:
        for tool in layer.tools:
            if tool in tools and res.is_allowed(tool):
                out.setdefault(tool, []).append(layer.label)
    return {t: out[t] for t in tools if t in out}


def _agents(policy: CompiledPolicy, wanted: list[str] | None) -> list[str | None] | None:
    from ..diagnostics import suggestion
    from ..names import fold

    if wanted is None:
        return None
    known = sorted(policy.agents)
    out: list[str | None] = []
    for raw in wanted:
        name = fold(raw)
        if name == NO_AGENT:
            out.append(None)
        elif name in policy.agents:
            out.append(name)
        else:
            hint = suggestion(name, known)
            listed = ", ".join(known) or "none"
            raise UsageError(
                f'--agent {raw}: the policy has no agent "{name}"'
                + (f"; {hint}" if hint else "")
                + f" (agents: {listed}; {NO_AGENT} for runs without an agent)"
            )
    return out


def _tools(policy: CompiledPolicy, names: list[str], wanted: list[str] | None) -> list[str]:
    from ..diagnostics import suggestion
    from ..names import normalize

    if wanted is None:
        return names
    out = []
    for raw in wanted:
        name = normalize(raw, policy.catalog.aliases)
        if name not in names:
            hint = suggestion(name, names)
            raise UsageError(
                f'--tool {raw}: no tool "{name}" in this policy\'s inventory'
                + (f"; {hint}" if hint else "")
            )
        out.append(name)
    return list(dict.fromkeys(out))


def run(args: argparse.Namespace) -> int:
    from ..analysis.matrix import Dimensions, baseline_cell, matrix_context
    from ..pipeline.resolve import default_inventory, resolve
    from .common import load_or_report

    if args.max_contexts < 1:  # "0 shown" would read as a matrix with nothing to show
        print("policyctl matrix: --max-contexts must be >= 1", file=sys.stderr)
        return EXIT_USAGE
    if args.summary and args.format != "text":
        print("policyctl matrix: --summary is a text view; drop --format", file=sys.stderr)
        return EXIT_USAGE
    policy = load_or_report(args.file)
    dims = Dimensions(policy, _agents(policy, args.agent))
    picked = dims.indexes(args.max_contexts)
    sampled = dims.total > len(picked)
    tools = _tools(policy, [t.name for t in default_inventory(policy).tools], args.tool)

    call_rules: dict[str, dict[str, list[str]]] = {}
    sandboxed: dict[str, bool] = {}

    def row(cell: MatrixContext) -> tuple[MatrixContext, list[str]]:
        res = resolve(policy, cell.context, require_tools=False)
        ruled = _call_rule_layers(res, tools) if policy.has_call_rules else {}
        cells = [_cell(res, t, ruled) for t in tools]
        sandboxed[cell.label] = res.context.sandboxed
        if ruled:
            call_rules[cell.label] = ruled
        return cell, cells

    rows = [row(dims.context_at(i)) for i in picked]
    if args.changed_only:
        bases = [row(matrix_context(baseline_cell(agent))) for agent in dims.agents]
        by_agent = {cell.context.agent: cells for cell, cells in bases}
        base_labels = {cell.label for cell, _ in bases}
        rows = bases + [
            (cell, cells)
            for cell, cells in rows
            if cell.label not in base_labels and cells != by_agent[cell.context.agent]
        ]
    table = [cells for _, cells in rows]
    if args.summary:
        from .matrixsummary import print_summary

        print_summary(dims.total, len(rows), sampled, tools, rows)
        return EXIT_OK
    if args.format == "json":
        from ..analysis.reportdata import context_fields

        out = {
            "contexts": dims.total,
            "shown": len(rows),
            "sampled": sampled,
            "changedOnly": args.changed_only,
            "tools": tools,
            "rows": [
                {
                    "context": cell.label,
                    # the same context as fields a tool can filter on (the label is kept)
                    "fields": context_fields(cell, sandboxed[cell.label]),
                    "cells": dict(zip(tools, cells, strict=True)),
                    # the layers whose call rules decide each allowed tool's calls
                    "callRules": call_rules.get(cell.label, {}),
                }
                for cell, cells in rows
            ],
        }
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return EXIT_OK
    if args.format == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(["context", *tools])
        for cell, cells in rows:
            writer.writerow([cell.label, *cells])
        return EXIT_OK
    varying = [i for i, _ in enumerate(tools) if len({cells[i] for cells in table}) > 1]
    fixed = [i for i in range(len(tools)) if i not in varying and table]
    same_ok = [tools[i] for i in fixed if table[0][i] == "ok"]
    same_gone = [f"{tools[i]} ({table[0][i]})" for i in fixed if table[0][i] != "ok"]
    where = "in the rows shown" if sampled or args.changed_only else "everywhere"
    head = f"{dims.total} contexts"
    if args.changed_only:
        head += f", {len(rows)} shown (the baselines and the rows that differ from them"
        head += f" among {len(picked)} sampled)" if sampled else ")"
    elif sampled:
        head += f", {len(picked)} shown (a deterministic sample)"
    print(head)
    print(f"allowed {where}: {', '.join(same_ok) or '(none)'}")
    print(f"removed {where}: {', '.join(same_gone) or '(none)'}")
    legend = "cells: ok = allowed, Lk = removed at layer k, C = construction filter"
    if any(WITH_CALL_RULES in cells for cells in table):
        legend += f", {WITH_CALL_RULES} = allowed, its calls decided by call rules"
    print(legend)
    if varying:
        width = max(len(cell.label) for cell, _ in rows)
        names = [tools[i] for i in varying]
        print(" " * width + "  " + "  ".join(names))
        for cell, cells in rows:
            print(
                cell.label.ljust(width)
                + "  "
                + "  ".join(cells[i].ljust(len(tools[i])) for i in varying).rstrip()
            )
    return EXIT_OK
