"""The host runs are offline: each runs in a network namespace where only loopback exists."""

from __future__ import annotations

import sys
from pathlib import Path

from host_drivers import FAKE_URL, _run

PROBE = """
import socket, sys, urllib.request
try:
    socket.create_connection(("1.1.1.1", 443), timeout=3)
    sys.exit("reached the internet")
except OSError as exc:
    print("outside:", exc.errno)
print("fake:", urllib.request.urlopen(sys.argv[1] + "/v1/responses", data=b"{}").status)
"""


def test_a_host_run_reaches_the_fake_model_and_nothing_else(tmp_path: Path) -> None:
    argv = [sys.executable, "-c", PROBE, FAKE_URL]
    run = _run(tmp_path, argv, tmp_path, {"PATH": "/usr/bin:/bin"}, 30, "responses", [])
    assert run["returncode"] == 0, run["stderr"]
    assert "outside: 101" in run["stdout"]  # ENETUNREACH: no route but loopback
    assert "fake: 200" in run["stdout"]
