"""What every benchmark shares: the scenario, its contexts and inventories, the expected
answers, percentiles, target marks, and the profile that explains a missed target.

The expected allowed set of every case comes from the executable specification in
tests/reference/ (independent of the engine), never from the engine itself.
"""

from __future__ import annotations

import cProfile
import io
import json
import pstats
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import os  # noqa: E402

from reference.pipeline import run as reference_run  # noqa: E402

from policyctl import Capture, RunContext, Sender, Tool  # noqa: E402
from policyctl.catalog.load import builtin_catalog  # noqa: E402
from policyctl.document.extends import load_document  # noqa: E402


def _scenario_path() -> Path:
    """`POLICYCTL_BENCH_SCENARIO`, else `shared/bench/scenario.json` beside the checkout (or
    beside the folder holding it, for a git worktree)."""
    if os.environ.get("POLICYCTL_BENCH_SCENARIO"):
        return Path(os.environ["POLICYCTL_BENCH_SCENARIO"])
    for base in (ROOT.parent, ROOT.parent.parent):
        candidate = base / "shared" / "bench" / "scenario.json"
        if candidate.exists():
            return candidate
    return ROOT.parent / "shared" / "bench" / "scenario.json"


DEFAULT_SCENARIO = _scenario_path()
SIZES = (0, 200, 2000)


class Scenario:
    def __init__(self, path: Path = DEFAULT_SCENARIO) -> None:
        self.spec: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        self.policy_path = path.parent / self.spec["policy"]
        self.document = load_document(self.policy_path).data
        self.catalog = builtin_catalog(self.document["catalog"])
        self.core = [t.id for t in self.catalog.tools]

    def context(self, sender_id: str | None = None, session_key: str | None = None) -> RunContext:
        c = self.spec["context"]
        s = c["sender"]
        return RunContext(
            agent=c["agent"],
            provider=c["provider"],
            model=c["model"],
            channel=c["channel"],
            group=c["group"],
            session_key=session_key or c["sessionKey"],
            spawned_by=c["spawnedBy"],
            subagent_depth=c["subagentDepth"],
            sender=Sender(id=sender_id or s["id"], name=s["name"], username=s["username"]),
            # the parent capture: an unrestricted parent that itself lost code_execution
            parent=Capture(None, ("code_execution",)),
        )

    def tools(self, n: int, salt: str = "") -> list[Tool]:
        """The scenario's inventory rule: core tools in catalog order, then N MCP tools."""
        return [
            *(Tool(t) for t in self.core),
            *(Tool.mcp(f"srv{i // 10}__tool{i % 10}{salt}") for i in range(n)),
        ]

    def expected(self, ctx: RunContext, tools: list[Tool]) -> tuple[str, ...]:
        return reference_run(self.catalog, self.document, ctx, tools).allowed


def percentiles(ns: list[int]) -> tuple[float, float]:
    """Median and p99 in microseconds."""
    ordered = sorted(ns)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return statistics.median(ordered) / 1000, p99 / 1000


def mark(value: float, target: float | None, unit: str = "µs") -> str:
    if target is None:
        return ""
    return f"≤ {target:g} {unit} " + ("✓" if value <= target else "✗ missed")


def profile_of(fn: Callable[[], object], repeats: int, top: int = 4) -> str:
    """The functions a missed case spends its time in (cumulative, own code first)."""
    prof = cProfile.Profile()
    calls = [fn] * repeats
    prof.enable()
    for call in calls:
        call()
    prof.disable()
    stats = pstats.Stats(prof, stream=io.StringIO())
    # the share of the whole case: the time of the calls made from this loop
    total = max(
        sum(ct for (f, _l, n), (_c, _n, _t, ct, _s) in stats.stats.items() if n == "<lambda>"),  # type: ignore[attr-defined]
        1e-9,
    )
    rows = []
    for (file, line, name), (_cc, _nc, _tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        if "policyctl" in file and name not in ("resolve", "<module>"):
            rows.append((ct, f"{Path(file).name}:{line}({name})"))
    rows.sort(reverse=True)
    return ", ".join(f"{label} {100 * ct / total:.0f}%" for ct, label in rows[:top])
