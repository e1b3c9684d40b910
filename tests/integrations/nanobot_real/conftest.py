"""Tests that run inside a virtual environment holding the real nanobot (PyPI `nanobot-ai`).

The outer suite (tests/integrations/test_nanobot.py) builds that environment and runs these;
they are not collected by the outer suite, whose environment has no nanobot.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
ROOT = HERE.parents[2]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace and a HOME of the test's own: nanobot writes its state under both."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def nanobot_config(tmp: Path, workspace: Path, api_base: str) -> Path:
    config = {
        "agents": {
            "defaults": {"workspace": str(workspace), "model": "fake-model", "provider": "custom"}
        },
        "providers": {"custom": {"apiKey": "not-a-key", "apiBase": api_base}},
    }
    path = tmp / "config.json"
    path.write_text(json.dumps(config))
    return path


@pytest.fixture
def example_policy() -> Iterator[Path]:
    yield ROOT / "examples" / "nanobot.yaml"
