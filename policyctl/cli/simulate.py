"""`policyctl simulate FILE --calls calls.jsonl`: replay a transcript of tool calls against a
policy, to see whether yesterday's sessions would break under a new policy."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from .common import EXIT_FINDINGS, EXIT_OK, UsageError, add_context_flags, subcommand

HELP = "replay recorded tool calls against a policy: allowed, refused (where), or vetoed"
EXAMPLE = """examples:
  policyctl simulate examples/team.yaml --calls session.jsonl --agent reviewer --provider openai
  policyctl simulate new-policy.yaml --calls session.jsonl --agent coder --format json

Each line of the calls file is a JSON object: {"tool": "exec", "params": {...}}.
Exit 1 when any call would be refused or vetoed.
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subcommand(sub, "simulate", HELP, EXAMPLE)
    p.add_argument("file", help="policy file")
    p.add_argument("--calls", required=True, metavar="JSONL", help="recorded calls, one per line")
    p.add_argument("--format", choices=["text", "json"], default="text")
    add_context_flags(p)
    p.set_defaults(run=run)


def read_calls(path: str) -> list[tuple[int, str, dict[str, Any]]]:
    # A transcript may come from anywhere (`--calls /dev/zero`, a FIFO, a 10 GB log): read it
    # like a policy file, a regular file under the same byte cap.
    from ..files import NotRegularFile, TooLarge, read_capped
    from ..settings import default_limits

    cap = default_limits().max_file_bytes
    try:
        lines = read_capped(Path(path), cap).decode("utf-8").splitlines()
    except TooLarge:
        raise UsageError(
            f"{path} is larger than the limit of {cap} bytes (raise POLICYCTL_MAX_FILE_BYTES "
            "if this is intended)"
        ) from None
    except NotRegularFile:
        raise UsageError(f"{path} is not a regular file") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: byte {exc.start} is not valid UTF-8") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    calls = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        # a transcript is model output: nesting deep enough to exhaust the parser's stack
        # is a bad line like any other, not a traceback
        try:
            item = json.loads(line)
        except RecursionError:
            raise UsageError(f"{path}:{number}: not JSON: nested too deeply") from None
        except ValueError as exc:
            raise UsageError(f"{path}:{number}: not JSON: {exc}") from None
        if not isinstance(item, dict) or not isinstance(item.get("tool"), str):
            raise UsageError(f'{path}:{number}: expected {{"tool": "...", "params": {{...}}}}')
        if any("\ud800" <= ch <= "\udfff" for ch in item["tool"]):
            # JSON's \ud800 escape decodes to a lone surrogate, which no tool is named and
            # no terminal or JSON report can print
            raise UsageError(
                f"{path}:{number}: the tool name {shown(item['tool'])} contains a lone "
                "surrogate (not valid Unicode)"
            )
        params = item.get("params", item.get("arguments", {}))
        if isinstance(params, str):
            try:
                params = json.loads(params) if params.strip() else {}
            except (ValueError, RecursionError):
                raise UsageError(f"{path}:{number}: params are not JSON") from None
        if not isinstance(params, dict):
            raise UsageError(f"{path}:{number}: params must be an object")
        calls.append((number, item["tool"], params))
    return calls


def run(args: argparse.Namespace) -> int:
    from ..explain import decide_tool
    from ..runtime.loopdetect import LoopDetector
    from .common import print_json
    from .resolve import resolve_for_cli

    calls = read_calls(args.calls)
    _, res = resolve_for_cli(args)
    loop = LoopDetector()
    rows: list[dict[str, Any]] = []
    for number, name, params in calls:
        row: dict[str, Any] = {"line": number, "tool": name}
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
        else:
            verdict = loop.observe(name, params)
            if verdict.level == "critical":
                row.update(
                    {"verdict": "vetoed", "detector": verdict.detector, "count": verdict.count}
                )
            else:
                row["verdict"] = "allowed"
                if verdict.level == "warning":
                    row["warning"] = verdict.message
        rows.append(row)
    counts = {
        k: sum(1 for r in rows if r["verdict"] == k) for k in ("allowed", "refused", "vetoed")
    }
    if args.format == "json":
        print_json({"context": res.context.to_json(), "calls": rows, "summary": counts})
    else:
        names = [shown(row["tool"]) for row in rows]
        width = max((len(name) for name in names), default=4)
        for row, name in zip(rows, names, strict=True):
            print(f"{row['line']:>4}  {name:<{width}}  {_describe(row)}")
        print(
            f"{len(rows)} calls: {counts['allowed']} allowed, {counts['refused']} refused, "
            f"{counts['vetoed']} vetoed by loop detection"
        )
    return EXIT_FINDINGS if counts["refused"] or counts["vetoed"] else EXIT_OK


def shown(name: str) -> str:
    """A recorded tool name as the terminal gets it: control characters, surrogates and
    backslashes escaped, so a transcript cannot move the cursor or clear the screen."""
    if name.isprintable() and "\\" not in name:
        return name
    return "".join(
        "\\\\" if ch == "\\" else ch if ch.isprintable() else repr(ch)[1:-1] for ch in name
    )


def _describe(row: dict[str, Any]) -> str:
    if row["verdict"] == "allowed":
        return "allowed" + (f"  ({row['warning']})" if "warning" in row else "")
    if row["verdict"] == "vetoed":
        return f"VETOED by loop detection ({row['detector']}, {row['count']} times)"
    if "stage" not in row:
        return f"REFUSED: {row['reason']}"
    where = "construction" if row["stage"] == 0 else f"layer {row['stage']}"
    rules = {"deny": f'denied by "{row["entry"]}"', "allow": "not in the allow list"}
    src = f" at {row['source']}" if row["source"] else ""
    return f"REFUSED at {where} ({row['label']}): {rules.get(row['kind'], row['kind'])}{src}"
