"""The compiled bundle's hash: identical across runs, key orders and Python versions."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from policyctl.api import compile_loaded
from policyctl.compile.bundle import build_bundle
from policyctl.document.extends import load_document

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
# Recorded once and reviewed; a test on another Python version compares against these.
EXPECTED = json.loads((Path(__file__).parent / "bundle_hashes.json").read_text(encoding="utf-8"))


def bundle_hash(path: Path) -> str:
    loaded = load_document(path)
    return str(build_bundle(loaded, compile_loaded(loaded))["hash"])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hash_is_stable_across_runs_and_python_versions(name: str) -> None:
    assert bundle_hash(EXAMPLES / name) == EXPECTED[name]


SEEDS = ("0", "1", "12345", "4242")
# In each process: the bundle hash of every example and the JSON of a few resolutions (trail
# and warnings included), so set or dict order that leaks into any output shows up.
_PROBE = """
import json, sys
from pathlib import Path
from policyctl import RunContext, Sender, resolve
from policyctl.api import compile_loaded
from policyctl.compile.bundle import build_bundle
from policyctl.document.extends import load_document
out = {}
for name in sys.argv[1:]:
    loaded = load_document(Path(name))
    policy = compile_loaded(loaded)
    runs = [RunContext(), RunContext(agent="coder", provider="openai", sender=Sender(id="42")),
            RunContext(session_key="agent:main:subagent:x", trigger="spawn")]
    out[name] = [build_bundle(loaded, policy)["hash"],
                 *(resolve(policy, c, require_tools=False).to_json() for c in runs)]
print(json.dumps(out, sort_keys=True))
"""


def _in_process_with_seed(seed: str, code: str, *args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_compiling_under_different_hash_seeds_gives_identical_output() -> None:
    files = [
        str(p)
        for p in sorted(EXAMPLES.glob("*.*"))
        if p.suffix in (".yaml", ".toml") and ".test." not in p.name
    ]
    outputs = {seed: _in_process_with_seed(seed, _PROBE, *files) for seed in SEEDS}
    assert len(set(outputs.values())) == 1, "output depends on PYTHONHASHSEED"
    hashes = {Path(k).name: v[0] for k, v in json.loads(outputs["0"]).items()}
    assert {k: v for k, v in hashes.items() if k in EXPECTED} == EXPECTED


def test_the_seeds_really_change_hash_order() -> None:
    """The comparison above can fail: the same processes order a set of strings differently."""
    probe = "print(list({'read', 'write', 'exec', 'web_search', 'gateway', 'browser'}))"
    assert len({_in_process_with_seed(seed, probe) for seed in SEEDS}) > 1


def _shuffled(value: Any, rnd: random.Random) -> Any:
    if isinstance(value, dict):
        items = list(value.items())
        rnd.shuffle(items)
        return {k: _shuffled(v, rnd) for k, v in items}
    if isinstance(value, list):
        return [_shuffled(v, rnd) for v in value]
    return value


@pytest.mark.parametrize("seed", range(5))
def test_hash_ignores_mapping_key_order_and_format(tmp_path: Path, seed: int) -> None:
    data = load_document(EXAMPLES / "chatbot.yaml").data
    reordered = tmp_path / "reordered.json"
    reordered.write_text(
        json.dumps(_shuffled(data, random.Random(seed)), indent=2), encoding="utf-8"
    )
    assert bundle_hash(reordered) == bundle_hash(EXAMPLES / "chatbot.yaml")
