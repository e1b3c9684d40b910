"""The host versions docs/testing-and-ci.md names are the ones the lock file pins and npm
installed, so the page never describes hosts the tests did not run."""

from __future__ import annotations

import json
import re
from pathlib import Path

from host_drivers import BIN
from host_records import PACKAGE, PACKAGES

DOC = Path(__file__).resolve().parents[2] / "docs" / "testing-and-ci.md"
LOCK = PACKAGE.with_name("package-lock.json")


def _documented() -> dict[str, str]:
    table = DOC.read_text(encoding="utf-8").split("<!-- hosts:pinned -->", 1)[1]
    rows = re.findall(r"^\| [^|]+ \| `([^`]+)` \| ([0-9.]+) \|", table, re.MULTILINE)
    return dict(rows)


def _pinned() -> dict[str, str]:
    """The lock's direct packages: the hosts, and what tests/openclaw needs beside them (the
    openclaw package, Node 24 to run it, the TypeScript compiler)."""
    package = json.loads(PACKAGE.read_text(encoding="utf-8"))
    return {**package["dependencies"], **package.get("optionalDependencies", {})}


def test_the_docs_name_the_pinned_versions() -> None:
    pinned = _pinned()
    assert _documented() == pinned
    assert set(PACKAGES.values()) <= set(pinned)
    assert all(re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", v) for v in pinned.values()), (
        "pin exact versions: a range would let `npm install` pick another host"
    )


def test_the_lock_file_and_the_installed_hosts_match_the_pins() -> None:
    pinned = _pinned()
    locked = json.loads(LOCK.read_text(encoding="utf-8"))["packages"]
    for name, version in pinned.items():
        assert locked[f"node_modules/{name}"]["version"] == version
        installed = BIN.parent / name / "package.json"
        assert installed.exists(), f"{name} is not installed: run `npm ci` in {PACKAGE.parent}"
        got = json.loads(installed.read_text(encoding="utf-8"))["version"]
        assert got == version, f"{name} {got} is installed, {version} is pinned: run `npm ci`"
