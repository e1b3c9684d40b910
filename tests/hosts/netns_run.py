"""Run one host inside a network namespace of its own: ``netns_run.py SPEC.json``.

Started as ``unshare --net python netns_run.py SPEC.json``: the namespace has only a loopback
interface, so a host that tried to reach anything but the fake model would fail, and the
fake it talks to runs here too, on the fixed port the host was configured with. SPEC holds
``argv``, ``cwd``, ``env``, ``timeout``, ``fake`` (``anthropic``, ``responses`` or null),
``script``, ``port`` and ``result`` (where this writes the outcome as JSON).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import struct
import subprocess
import sys
import time
from typing import Any

from fake_anthropic import FakeAnthropic, ToolUse
from fake_responses import Call, FakeResponses

_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1


def loopback_up() -> None:
    """A fresh network namespace has ``lo`` down; bring it up (what ``ip link set lo up`` does)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        request = struct.pack("16sh", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(s, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(s, _SIOCSIFFLAGS, struct.pack("16sh", b"lo", flags | _IFF_UP))


def _fake(spec: dict[str, Any]) -> FakeAnthropic | FakeResponses | None:
    if spec["fake"] == "anthropic":
        return FakeAnthropic([ToolUse(**step) for step in spec["script"]], port=spec["port"])
    if spec["fake"] == "responses":
        return FakeResponses([Call(**step) for step in spec["script"]], port=spec["port"])
    return None


def run(spec: dict[str, Any]) -> dict[str, Any]:
    loopback_up()
    fake = _fake(spec)
    with fake if fake is not None else contextlib.nullcontext():
        start = time.monotonic()
        proc = subprocess.Popen(
            spec["argv"], cwd=spec["cwd"], env=spec["env"], stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        try:
            out, err = proc.communicate(timeout=spec["timeout"])
            code: int | None = proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)  # the host and its children (node, the hook) in one group
            out, err = proc.communicate()
            code = None
        seconds = time.monotonic() - start
    requests = fake.requests if fake is not None else []
    return {"returncode": code, "stdout": out, "stderr": err, "seconds": seconds,
            "requests": requests}  # fmt: skip


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as given:
        spec = json.load(given)
    result = run(spec)
    with open(spec["result"], "w", encoding="utf-8") as out:
        json.dump(result, out)
