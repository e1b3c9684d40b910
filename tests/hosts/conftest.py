"""Fixtures for the real-host tests: the hook command every host is configured with."""

from __future__ import annotations

import sys

import pytest
from host_drivers import HERE


@pytest.fixture
def hook_command() -> object:
    """hook_command(host) -> argv of the hook the host runs before each tool call."""

    def command(host: str) -> list[str]:
        return [sys.executable, str(HERE / "standin_hook.py"), host]

    return command
