"""`policyctl matrix FILE`: the contexts a policy can tell apart, and each tool's fate in each."""

from __future__ import annotations

import argparse
import csv
import json
import sys

from .common import EXIT_OK, subcommand

HELP = "print the context matrix: every distinct context x tool, allowed or removed at a layer"
EXAMPLE = """examples:
  policyctl matrix examples/chatbot.yaml
  policyctl matrix examples/team.yaml --format csv > matrix.csv
"""


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
    p.set_defaults(run=run)


def _cell(res, tool: str) -> str:  # type: ignore[no-untyped-def]
    if res.is_allowed(tool):
        return "ok"
    removal = res.removal(tool)
    return "-" if removal is None else ("C" if removal.stage == 0 else f"L{removal.stage}")


def run(args: argparse.Namespace) -> int:
    from ..matrix import context_matrix
    from ..resolve import resolve
    from .common import load_or_report

    policy = load_or_report(args.file)
    matrix = context_matrix(policy, args.max_contexts)
    rows = [(cell, resolve(policy, cell.context, require_tools=False)) for cell in matrix.contexts]
    tools = [t.name for t in rows[0][1].inventory.tools] if rows else []
    table = [[_cell(res, t) for t in tools] for _, res in rows]
    if args.format == "json":
        out = {
            "contexts": matrix.total,
            "shown": len(rows),
            "sampled": matrix.sampled,
            "tools": tools,
            "rows": [
                {"context": cell.label, "cells": dict(zip(tools, cells, strict=True))}
                for (cell, _), cells in zip(rows, table, strict=True)
            ],
        }
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return EXIT_OK
    if args.format == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(["context", *tools])
        for (cell, _), cells in zip(rows, table, strict=True):
            writer.writerow([cell.label, *cells])
        return EXIT_OK
    varying = [i for i, _ in enumerate(tools) if len({row[i] for row in table}) > 1]
    same_ok = [
        tools[i] for i in range(len(tools)) if i not in varying and table and table[0][i] == "ok"
    ]
    same_gone = [
        f"{tools[i]} ({table[0][i]})"
        for i in range(len(tools))
        if i not in varying and table and table[0][i] != "ok"
    ]
    print(f"{matrix.total} contexts" + (f", {len(rows)} shown (sampled)" if matrix.sampled else ""))
    print(f"allowed everywhere: {', '.join(same_ok) or '(none)'}")
    print(f"removed everywhere: {', '.join(same_gone) or '(none)'}")
    print("cells: ok = allowed, Lk = removed at layer k, C = construction filter")
    if varying:
        width = max(len(cell.label) for cell, _ in rows)
        names = [tools[i] for i in varying]
        print(" " * width + "  " + "  ".join(names))
        for (cell, _), cells in zip(rows, table, strict=True):
            print(
                cell.label.ljust(width)
                + "  "
                + "  ".join(cells[i].ljust(len(tools[i])) for i in varying).rstrip()
            )
    return EXIT_OK
