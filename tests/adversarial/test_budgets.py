"""Budgets (issue 11, item 13): no input within the documented limits takes more than 10 s of
CPU or 1 GiB of memory in any command.

Each command runs in a child process under RLIMIT_CPU (10 s) and RLIMIT_AS (1 GiB): the kernel
enforces the budget, so the check does not depend on how busy the machine is (wall-clock
timings are for bench/). The inputs are the worst cases each limit allows: an alias bomb just
under the alias budget, a file just under the byte cap holding as many entries as fit, and
generated policies with very many scopes. By default a few inputs run through `validate`, and
one through `matrix` and `diff` (the context walks); `POLICYCTL_BUDGETS=1` runs every input
through every command (minutes).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from policyctl.settings import Limits

CPU_SECONDS = 10
MEMORY_BYTES = 1 << 30
FULL = os.environ.get("POLICYCTL_BUDGETS") == "1"
MAX_FILE_BYTES = 5 * 1024 * 1024


def _alias_bomb(aliases: int = 99) -> str:
    # 99 aliases of a 1,000-node agent entry: just under the 100,000 nodes aliases may add
    deny = ", ".join(f"t{i}" for i in range(990))
    lines = ["agents:", "  entries:", f"    a0: &e {{tools: {{deny: [{deny}]}}}}"]
    lines += [f"    a{i}: *e" for i in range(1, aliases + 1)]
    return "\n".join(lines) + "\n"


def _fill(make: Callable[[int], object]) -> str:
    """The largest document `make(n)` that stays under the byte cap (binary search on n)."""
    low, high = 1, 2_000_000
    while low < high:
        mid = (low + high + 1) // 2
        if len(json.dumps(make(mid))) <= MAX_FILE_BYTES:
            low = mid
        else:
            high = mid - 1
    return json.dumps(make(low))


LIMITS = Limits()


def _agents_at_limit() -> str:
    # every agent the limit allows, with every entry the limit allows spread over them
    per = LIMITS.max_entries // LIMITS.max_agents
    return json.dumps(
        {
            "agents": {
                "entries": {
                    f"a{i}": {"tools": {"deny": [f"t{i}_{j}" for j in range(per)]}}
                    for i in range(LIMITS.max_agents)
                }
            }
        }
    )


def _scale_at_limit() -> str:
    # bench/bench_scale.py's policy shape, as large as the limits allow
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from bench_scale import generate

    # (10 sender keys per agent, and one per tenth agent's group)
    return json.dumps(generate(min(LIMITS.max_agents, LIMITS.max_sender_keys * 10 // 101)))


def _sender_tables_at_limit() -> str:
    # every agent with a sender table of its own, the rest of the sender keys global: the
    # walks that pair each sender value with each table (the matrix's sender classes, PC436's
    # rivals) cost values x tables, 250 million steps here; the empty rules keep loading cheap
    own = LIMITS.max_agents
    return json.dumps(
        {
            "tools": {
                "toolsBySender": {f"id:u{i}": {} for i in range(LIMITS.max_sender_keys - own)}
            },
            "agents": {
                "entries": {
                    f"a{i}": {"tools": {"toolsBySender": {f"id:a{i}": {}}}} for i in range(own)
                }
            },
        }
    )


def _yaml_at_limit() -> str:
    # a block list of tiny entries, just under the YAML node limit
    items = "".join(f"    - t{i}\n" for i in range(LIMITS.max_yaml_nodes - 10))
    return f"tools:\n  deny:\n{items}"


INPUTS: dict[str, Callable[[], str]] = {
    "alias-bomb.yaml": _alias_bomb,
    # just under the 2,000,000-node cap (before aliases had their own budget: 278 s, 1.8 GB)
    "alias-bomb-2m.yaml": lambda: _alias_bomb(1990),
    "deny-entries.json": lambda: _fill(lambda n: {"tools": {"deny": [f"t{i}" for i in range(n)]}}),
    "deny-globs.json": lambda: _fill(
        lambda n: {"tools": {"deny": [f"tool{i}_*x" for i in range(n)]}}
    ),
    "agents.json": lambda: _fill(
        lambda n: {"agents": {"entries": {f"a{i}": {"tools": {"deny": ["x"]}} for i in range(n)}}}
    ),
    "senders.json": lambda: _fill(
        lambda n: {"tools": {"toolsBySender": {f"id:{i}": {"deny": ["x"]} for i in range(n)}}}
    ),
    # the 5 MiB files above are over the size limits and fail fast (PC117); these are the
    # largest the limits allow
    "deny-entries-at-limit.json": lambda: json.dumps(
        {"tools": {"deny": [f"t{i}" for i in range(LIMITS.max_entries)]}}
    ),
    "deny-globs-at-limit.json": lambda: json.dumps(
        {"tools": {"deny": [f"tool{i}_*x" for i in range(LIMITS.max_entries)]}}
    ),
    "agents-at-limit.json": _agents_at_limit,
    "senders-at-limit.json": lambda: json.dumps(
        {
            "tools": {
                "toolsBySender": {f"id:{i}": {"deny": ["x"]} for i in range(LIMITS.max_sender_keys)}
            }
        }
    ),
    "scale-at-limit.json": _scale_at_limit,
    "sender-tables-at-limit.json": _sender_tables_at_limit,
    "yaml-at-limit.yaml": _yaml_at_limit,
    # call rules at their limit: shell rules (one first word each) and path rules (one
    # compiled gitignore pattern each, ~30 us)
    "exec-rules-at-limit.json": lambda: json.dumps(
        {
            "tools": {
                "profile": "coding",
                "deny": [f"exec(tool{i} --danger *)" for i in range(LIMITS.max_call_rules // 2)],
                "allow": [f"exec(tool{i} *)" for i in range(LIMITS.max_call_rules // 2)],
            }
        }
    ),
    "path-rules-at-limit.json": lambda: json.dumps(
        {
            "tools": {
                "profile": "coding",
                "deny": [f"read(/data/d{i}/**)" for i in range(LIMITS.max_call_rules // 2)],
                "allow": [f"read(/data/d{i}/x/**)" for i in range(LIMITS.max_call_rules // 2)],
            }
        }
    ),
    # TOML is read by tomllib (pure Python): 5 MiB of the shortest entries TOML can write
    "deny-entries.toml": lambda: (
        "[tools]\ndeny = [" + ",".join(['"a"'] * (MAX_FILE_BYTES // 4 - 8)) + "]\n"
    ),
}
COMMANDS = {
    "validate": ["validate", "{file}"],
    "resolve": ["resolve", "{file}", "--agent", "a1", "--sender-id", "1"],
    "explain": ["explain", "{file}", "--agent", "a1", "--tool", "exec"],
    "matrix": ["matrix", "{file}", "--format", "json"],
    "diff": ["diff", "{file}", "{file}"],
    "compile": ["compile", "{file}"],
}
# Known to exceed the budget, or to sit at its edge: tracked here, not hidden (those at the
# edge pass on some runs and are reported as XPASS). None left: since the size limits (PC117)
# the 5 MiB files are refused in 1-4 s of CPU, and every case within the limits measured under
# 10 s of CPU and 400 MB on a heavily loaded 2-core machine. The slowest, at the edge under
# that load: `diff` of bench_scale's shape at the limits, 9-11 s (two loads of 2.7 s each,
# then 10,000 contexts resolved in both policies, ~2 s: the loads are most of it); `validate`
# of it 6 s, `compile` 7.4 s.
# (100,000 path specifiers, before their own limit of 50,000: `diff` 15.4 s of CPU, 10.0-10.5 s
# once compiled patterns were shared; at the limit about half.)
OVER_BUDGET: set[tuple[str, str]] = set()
DEFAULT = {
    ("alias-bomb.yaml", "validate"),
    ("alias-bomb-2m.yaml", "validate"),
    ("deny-entries.json", "validate"),
    ("agents.json", "validate"),  # refused fast (PC117), not compiled for 20 s
    # values x tables walks (matrix sender classes: 38 s; PC436: 80 s), 2-4 s of CPU each
    ("sender-tables-at-limit.json", "validate"),
    ("sender-tables-at-limit.json", "matrix"),
    ("sender-tables-at-limit.json", "diff"),
}


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


CASES = [
    pytest.param(
        name,
        command,
        marks=[
            *(
                [pytest.mark.xfail(reason="over budget: see OVER_BUDGET")]
                if (name, command) in OVER_BUDGET
                else []
            ),
            *(
                []
                if FULL or (name, command) in DEFAULT
                else [pytest.mark.skip(reason="POLICYCTL_BUDGETS=1")]
            ),
        ],
        id=f"{command}-{name}",
    )
    for name in INPUTS
    for command in COMMANDS
]


@pytest.mark.parametrize("name,command", CASES)
def test_no_command_exceeds_its_budget(tmp_path: Path, name: str, command: str) -> None:
    path = tmp_path / name
    path.write_text(INPUTS[name](), encoding="utf-8")
    assert path.stat().st_size <= MAX_FILE_BYTES
    args = [a.format(file=path) for a in COMMANDS[command]]
    done = subprocess.run(
        [sys.executable, "-m", "policyctl", *args],
        capture_output=True,
        text=True,
        preexec_fn=_limit,
        timeout=600,
        check=False,
    )
    # killed by SIGXCPU / SIGKILL, or a MemoryError traceback: over budget
    assert done.returncode in (0, 1, 2), (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
