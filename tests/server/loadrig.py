"""The load rig: real `policyctl serve` replicas, the real nginx in front of them (the
compose file's nginx.conf, pointed at loopback ports), and wrk driving them. Used by
tests/server/test_server_load.py and bench/bench_server.py."""

from __future__ import annotations

import contextlib
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from serve_process import ROOT, free_port, start, stop, wait_ready

NGINX_CONF = ROOT / "deploy" / "compose" / "nginx.conf"
DECIDE_BODY = (
    '{"tool": "Bash", "arguments": {"command": "git status"}, "context": {"agent": "coder"}}'
)


@dataclass(frozen=True)
class WrkResult:
    requests: int
    seconds: float
    rps: float
    p50_ms: float
    p99_ms: float
    errors: int  # non-2xx answers and socket errors
    raw: str = ""  # wrk's report

    def line(self, label: str) -> str:
        return (
            f"{label}: {self.rps:,.0f} req/s, p50 {self.p50_ms:.2f} ms, p99 {self.p99_ms:.2f} ms,"
            f" {self.requests} requests, {self.errors} errors"
        )


@contextlib.contextmanager
def replicas(
    policy: str, count: int, *flags: str
) -> Iterator[list[tuple[str, subprocess.Popen[bytes]]]]:
    """`count` ready `policyctl serve` processes: (base URL, process) each."""
    started: list[tuple[str, subprocess.Popen[bytes]]] = []
    try:
        for _ in range(count):
            port = free_port()
            proc = start(policy, port, *flags)
            started.append((f"http://127.0.0.1:{port}", proc))
        for url, proc in started:
            wait_ready(url, proc)
        yield started
    finally:
        for _, proc in started:
            stop(proc)


def wait_port(port: int, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on {port}")


@contextlib.contextmanager
def nginx(upstreams: list[str], workdir: Path) -> Iterator[str]:
    """The real nginx with deploy/compose/nginx.conf, its upstream set to `upstreams`."""
    conf = NGINX_CONF.read_text()
    servers = "\n".join(
        f"        server {u.removeprefix('http://')} max_fails=1 fail_timeout=5s;"
        for u in upstreams
    )
    conf = re.sub(r"^\s*server policyctl:\d+[^\n]*$", servers, conf, flags=re.M)
    port = free_port()
    conf = re.sub(r"listen \d+;", f"listen 127.0.0.1:{port};", conf)
    conf = conf.replace("/tmp/", f"{workdir}/").replace(
        "worker_processes auto;", "worker_processes 1;"
    )
    path = workdir / "nginx.conf"
    path.write_text(conf)
    proc = subprocess.Popen(
        ["nginx", "-p", str(workdir), "-c", str(path), "-g", "daemon off;"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_port(port)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.send_signal(signal.SIGQUIT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def lua_script(workdir: Path, body: str = DECIDE_BODY, rate_per_connection: float = 0.0) -> Path:
    """wrk's script: POST `body`; with a rate, each connection waits between requests."""
    escaped = body.replace("\\", "\\\\").replace("'", "\\'")
    lines = [
        'wrk.method = "POST"',
        'wrk.headers["Content-Type"] = "application/json"',
        f"wrk.body = '{escaped}'",
    ]
    if rate_per_connection > 0:
        lines.append(f"function delay() return {1000.0 / rate_per_connection:.3f} end")
    path = workdir / f"decide-{rate_per_connection:g}.lua"
    path.write_text("\n".join(lines) + "\n")
    return path


def wrk(url: str, seconds: float, connections: int, script: Path, threads: int = 1) -> WrkResult:
    done = subprocess.run(
        [
            "wrk",
            f"-t{threads}",
            f"-c{connections}",
            f"-d{seconds:g}s",
            "--latency",
            "-s",
            str(script),
            url,
        ],
        capture_output=True,
        text=True,
        timeout=seconds + 60,
    )
    assert done.returncode == 0, done.stderr
    return parse_wrk(done.stdout, seconds)


def _ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()  # type: ignore[union-attr]
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def parse_wrk(out: str, seconds: float) -> WrkResult:
    requests = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    # the "Latency Distribution" lines: `     99%   12.44ms`
    p50 = _ms(re.search(r"^\s+50%\s+(\S+)$", out, re.M).group(1))  # type: ignore[union-attr]
    p99 = _ms(re.search(r"^\s+99%\s+(\S+)$", out, re.M).group(1))  # type: ignore[union-attr]
    errors = 0
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if non2xx:
        errors += int(non2xx.group(1))
    sockets = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out
    )
    if sockets:
        errors += sum(int(n) for n in sockets.groups())
    return WrkResult(requests, seconds, rps, p50, p99, errors, out)
