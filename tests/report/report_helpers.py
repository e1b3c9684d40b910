"""Write a report with the real command and open it in the browser."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from conftest import EXAMPLES

from policyctl.cli.main import main

#: the shipped example policies (test files and catalogs are not policies)
EXAMPLE_POLICIES = sorted(
    p for p in [*EXAMPLES.glob("*.yaml"), *EXAMPLES.glob("*.toml")] if ".test." not in p.name
)
ALLOWED = ("ok", "ok+")


def shown(path: Path) -> str:
    """A policy's path as an operator types it: relative to the working folder when inside."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(list(argv))
    return code, out.getvalue()


def write_report(target: Path, *argv: str) -> Path:
    code, _ = cli("report", *argv, "-o", str(target))
    assert code == 0
    return target


def matrix_json(policy: Path, *extra: str) -> dict[str, Any]:
    code, out = cli("matrix", str(policy), "--format", "json", "--max-contexts", "100000", *extra)
    assert code == 0
    data: dict[str, Any] = json.loads(out)
    return data


def open_report(page: Any, path: Path, tab: str = "matrix") -> None:
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready]")
    page.click(f"#tab-{tab}")


def stats(page: Any) -> dict[str, int]:
    found = page.eval_on_selector("#stats", "e => Object.assign({}, e.dataset)")
    return {k: int(v) for k, v in found.items()}


def detail(page: Any) -> str:
    text: str = page.inner_text("#detail")
    return text
