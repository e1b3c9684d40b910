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
from policyctl.bundle import build_bundle
from policyctl.loader import load_document

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


def test_hash_is_identical_in_a_fresh_process() -> None:
    code = (
        "from pathlib import Path; from policyctl.loader import load_document; "
        "from policyctl.api import compile_loaded; from policyctl.bundle import build_bundle; "
        f"l = load_document(Path({str(EXAMPLES / 'team.yaml')!r})); "
        "print(build_bundle(l, compile_loaded(l))['hash'])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345", "PATH": "/usr/bin:/bin"},
    )
    assert out.stdout.strip() == bundle_hash(EXAMPLES / "team.yaml")


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
