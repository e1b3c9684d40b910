"""`policyctl resolve FILE [context flags]`: the effective tool list of one run."""

from __future__ import annotations

import argparse
import sys

from .common import EXIT_FINDINGS, EXIT_OK, add_context_flags, subcommand

HELP = "print the tools a run may use"
EXAMPLE = """examples:
  policyctl resolve examples/team.yaml --agent coder --provider openai --model gpt-5.4
  policyctl resolve examples/platform.toml --agent orchestrator --add-tool deploy@ops
  policyctl resolve examples/chatbot.yaml --session-key agent:support:slack:group:C123 --format json
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subcommand(sub, "resolve", HELP, EXAMPLE)
    p.add_argument("file", help="policy file (YAML, TOML or JSON)")
    p.add_argument("--format", choices=["text", "json"], default="text")
    add_context_flags(p)
    p.set_defaults(run=run)


def resolve_for_cli(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """Load, build the context, resolve (showing an empty run rather than raising)."""
    from ..pipeline.resolve import resolve
    from .common import context_from_args, inventory_from_args, load_or_report

    policy = load_or_report(args.file)
    ctx = context_from_args(args)
    inventory = inventory_from_args(args, policy)
    return policy, resolve(policy, ctx, inventory, require_tools=False)


def print_context_warnings(res, fmt: str) -> None:  # type: ignore[no-untyped-def]
    """`explain` prints only the warnings about the context (PC450-PC454) in text."""
    from ..pipeline.warnings import CONTEXT_CODES
    from .output import render_diagnostics

    notes = [w for w in res.warnings if w.code in CONTEXT_CODES]
    if notes and fmt == "text":
        print(render_diagnostics(notes, sys.stdout))


def run(args: argparse.Namespace) -> int:
    from .common import print_json
    from .output import Painter, render_diagnostics

    policy, res = resolve_for_cli(args)
    if args.format == "json":
        print_json(res.to_json())
        return EXIT_OK if res.allowed or not res.inventory.tools else EXIT_FINDINGS
    paint = Painter(sys.stdout)
    ctx = res.context
    shown = {
        k: v
        for k, v in ctx.to_json().items()
        if v not in (None, False, 0, "user", "off", "main") and k != "sender"
    }
    s = ctx.sender
    sender = {
        k: v
        for k, v in (("id", s.id), ("e164", s.e164), ("username", s.username), ("name", s.name))
        if v
    }
    print(f"policy: {args.file} (catalog {policy.catalog.name})")
    context_text = " ".join(f"{k}={v}" for k, v in shown.items()) or "(empty)"
    if sender:
        context_text += " sender=" + ",".join(f"{k}:{v}" for k, v in sender.items())
    print(f"context: {context_text}")
    print(paint(f"allowed ({len(res.allowed)}):", "green"), ", ".join(res.allowed) or "(none)")
    print(paint(f"removed ({len(res.removed)}):", "red"))
    stages: dict[tuple[int, str], list[str]] = {}
    for r in res.removed:
        stages.setdefault((r.stage, r.label), []).append(r.tool)
    for (stage, label), tools in stages.items():
        where = "construction" if stage == 0 else f"layer {stage:>2}"
        print(f"  {where} {label}: {', '.join(tools)}")
    _print_call_rules(res)
    if res.warnings:
        print(render_diagnostics(res.warnings, sys.stdout))
    if not res.allowed and res.inventory.tools:
        print(paint("no callable tools remain for this run", "red"))
        return EXIT_FINDINGS
    return EXIT_OK


def _print_call_rules(res) -> None:  # type: ignore[no-untyped-def]
    """The run's call rules per allowed tool, when it has some (`explain --call` decides one)."""
    if not res.call_layers:
        return
    from ..pipeline.calls import rules_json

    rules = rules_json(res.call_layers, res.allowed)
    print(f"call rules ({len(rules)} tools; decide one with explain --tool T --call JSON):")
    for tool, rows in rules.items():
        print(f"  {tool}:")
        for row in rows:
            src = row["source"]
            where = f" ({src['file']}:{src['line']}:{src['column']})" if src else ""
            print(f"    {row['effect']:<5} {row['entry']}{where}  [{row['layer']}]")
