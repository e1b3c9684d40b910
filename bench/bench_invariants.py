"""Policy-test invariants over a matrix of more than 30,000 contexts.

    python bench/bench_invariants.py [--agents 10]

The policy is bench_scale's (10 agents: 41,184 contexts). Timed: `policyctl test`'s whole run
of a test file with two `never` invariants (one scoped by `when:`) and `subagentSubsetOfParent`
at the default settings, where every context is checked (none sampled); and, for comparison,
resolving every context of the matrix one by one, as the check did before contexts were
grouped by their layer plans.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_scale import generate  # noqa: E402

from policyctl.analysis.matrix import context_matrix  # noqa: E402
from policyctl.analysis.testing import run_test_file  # noqa: E402
from policyctl.api import load_policy  # noqa: E402
from policyctl.pipeline.resolve import resolve  # noqa: E402

TEST = """\
policy: big.json
invariants:
  - never: {tools: [gateway]}
  - never: {tools: [exec], when: {agent: agent0}}
  - subagentSubsetOfParent: true
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--agents", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "big.json").write_text(json.dumps(generate(args.agents)), encoding="utf-8")
        (root / "big.test.yaml").write_text(TEST, encoding="utf-8")
        start = time.perf_counter()
        out = run_test_file(root / "big.test.yaml")
        walked = time.perf_counter() - start
        assert out.contexts_checked == out.contexts_total, "sampled"
        policy = load_policy(root / "big.json")
        start = time.perf_counter()
        matrix = context_matrix(policy, out.contexts_total)
        for cell in matrix.contexts:
            resolve(policy, cell.context, require_tools=False)
        every = time.perf_counter() - start
    verdicts = ", ".join("pass" if r.passed else "fail" for r in out.results)
    print(f"contexts: {out.contexts_total:,} (all checked; invariants: {verdicts})")
    print(f"policyctl test, 3 invariants: {walked:.2f} s")
    print(f"resolving every context one by one (no invariant checked): {every:.2f} s")


if __name__ == "__main__":
    main()
