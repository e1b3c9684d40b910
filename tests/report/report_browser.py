"""The browser the report tests drive (fixtures the test modules import): Debian's chromium
through Playwright (no download).

`.ci/run` installs the `chromium` package; `POLICYCTL_CHROMIUM` names another binary. A
missing browser fails the tests: a report nobody opened is not tested.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


def chromium_path() -> str:
    wanted = os.environ.get("POLICYCTL_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(wanted).exists():
        pytest.fail(f"no chromium at {wanted}: apt-get install -y chromium (see .ci/run)")
    return wanted


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    # per module, not per session: Playwright's sync API keeps an event loop running in this
    # thread while it is open, and every later test calling asyncio.run() would fail
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    yield opened
    context.close()
    assert not errors, f"the page raised: {errors}"
