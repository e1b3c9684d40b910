"""The HTML report of a large policy in a real browser: open it, then filter it.

    python bench/bench_report.py [--agents 20] [--max-contexts 35000] [--repeat 3]

Generates a policy (in a temporary folder) whose matrix has more than 30,000 contexts over
the full catalog (60+ tools): A agents, each denying one tool (every third also per
provider), two providers with rules, two sender keys, a channel with four groups and one
with a wildcard group. `policyctl report` writes the page; Debian's chromium (Playwright,
`executable_path`, never a downloaded browser) opens it from file://.

Printed, each the median of `--repeat` runs in a fresh page:
- write: `policyctl report` (compile, matrix, every distinct run explained, the page), its
  time, the page's size and the process's peak resident memory;
- open: navigation start to the page's data parsed and the summary drawn (`data-ready`);
- matrix: the matrix tab drawn (filters applied, only the rows in view);
- filter agent / tool / differs: one filter changed, the stats and the rows in view redrawn;
- scroll: a jump to the last row drawn.
The target (issue 24): open and filter within about two seconds on this machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TOOLS = [
    "read", "write", "edit", "exec", "process", "web_search", "web_fetch", "browser", "canvas",
    "message", "cron", "gateway", "image", "sessions_list", "sessions_send",
]  # fmt: skip


def generate(agents: int) -> dict[str, Any]:
    entries: dict[str, Any] = {}
    for a in range(agents):
        tools: dict[str, Any] = {"deny": [TOOLS[a % len(TOOLS)]]}
        if a % 3 == 0:
            tools["byProvider"] = {"openai": {"deny": [TOOLS[(a + 3) % len(TOOLS)]]}}
        entries[f"agent{a:02d}"] = {"tools": tools}
    groups = {f"G{g}": {"tools": {"deny": [TOOLS[g % len(TOOLS)]]}} for g in range(4)}
    return {
        "tools": {
            "profile": "full",
            "byProvider": {
                "ollama": {"profile": "minimal"},
                "anthropic/claude-haiku": {"deny": ["exec"]},
            },
            "toolsBySender": {
                "id:admin": {"alsoAllow": ["gateway"]},
                "username:bot": {"deny": ["message"]},
            },
        },
        "channels": {
            "slack": {"groups": groups},
            "discord": {"groups": {"*": {"tools": {"deny": ["exec"]}}}},
        },
        "agents": {"entries": entries},
    }


def timed(page: Any, action: str) -> float:
    """Run `action` (JS) in the page and wait for two frames: the time until it is painted."""
    ms: float = page.evaluate(
        """async (action) => {
            const t0 = performance.now();
            (new Function(action))();
            await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
            return performance.now() - t0;
        }""",
        action,
    )
    return ms


def change(select: str, value: str) -> str:
    return (
        f"const s = document.querySelector({json.dumps(select)}); s.value = {json.dumps(value)};"
        "s.dispatchEvent(new Event('change'));"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument("--max-contexts", type=int, default=35_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    chromium = os.environ.get("POLICYCTL_CHROMIUM") or shutil.which("chromium")
    if not chromium:
        sys.exit("no chromium: apt-get install -y chromium")
    with tempfile.TemporaryDirectory() as tmp:
        policy = Path(tmp) / "large.json"
        policy.write_text(json.dumps(generate(args.agents)), encoding="utf-8")
        report = Path(tmp) / "large.html"
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "policyctl", "report", str(policy), "-o", str(report),
             "--max-contexts", str(args.max_contexts)],
            check=True, cwd=ROOT,
        )  # fmt: skip
        write_s = time.perf_counter() - t0
        # the only child so far: its peak resident set is the report writer's
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        size_mb = report.stat().st_size / 1e6
        figures: dict[str, list[float]] = {}
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium)
            for _ in range(args.repeat):
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.goto(report.as_uri())
                page.wait_for_selector("body[data-ready]", timeout=60_000)
                # the page stamps when it is ready, in ms since navigation started
                figures.setdefault("open", []).append(
                    float(page.eval_on_selector("body", "b => b.dataset.readyMs"))
                )
                steps = {
                    "matrix": "document.getElementById('tab-matrix').click()",
                    "filter agent": change("#f-agent", "agent07"),
                    "filter tool": "const i = document.getElementById('f-tool');"
                    " i.value = 'web'; i.dispatchEvent(new Event('input'));",
                    "filter differs": "const c = document.getElementById('f-differs');"
                    " c.checked = true; c.dispatchEvent(new Event('change'));",
                    "clear filters": change("#f-agent", "")
                    + "const i = document.getElementById('f-tool'); i.value = '';"
                    " i.dispatchEvent(new Event('input'));",
                    "scroll to end": "const g = document.getElementById('grid');"
                    " g.scrollTop = g.scrollHeight; g.dispatchEvent(new Event('scroll'));",
                }
                for name, action in steps.items():
                    figures.setdefault(name, []).append(timed(page, action))
                rows = page.eval_on_selector("#stats", "e => e.dataset.rows")
                contexts, tools = page.evaluate(
                    "(() => { const d = JSON.parse(document.getElementById('report-data')"
                    ".textContent); return [d.contexts.length, d.tools.length]; })()"
                )
                drawn = page.locator("#grid-rows .row").count()
                page.close()
            browser.close()
    with open("/proc/loadavg", encoding="ascii") as load:
        loadavg = " ".join(load.read().split()[:3])
    print(f"report of {contexts} contexts x {tools} tools ({args.agents} agents); load {loadavg}")
    print(f"write (policyctl report): {write_s:.1f} s, {size_mb:.1f} MB, peak {peak_mb:.0f} MB")
    for name, values in figures.items():
        print(f"{name:>15}: {statistics.median(values):7.0f} ms (runs: "
              + ", ".join(f"{v:.0f}" for v in values) + ")")  # fmt: skip
    print(f"after the last filter: {rows} rows kept, {drawn} drawn")


if __name__ == "__main__":
    main()
