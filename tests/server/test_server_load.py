"""Load, rollout and fault tests on loopback: real `policyctl serve` replicas, the real nginx
(the compose file's configuration) and wrk. CI runs a short form (a few seconds a run);
POLICYCTL_LOAD_FULL=1 runs each for 20 s with more connections. Figures are printed (`-s`),
never asserted: bench/bench_server.py holds the latency targets."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import httpx
from bundle_server import BundleServer, compile_bundle, make_key
from loadrig import lua_script, nginx, replicas, wrk
from serve_process import ROOT

FULL = os.environ.get("POLICYCTL_LOAD_FULL") == "1"
SECONDS = 20.0 if FULL else 2.0
CONNECTIONS = 32 if FULL else 8
POLICY = str(ROOT / "examples" / "hosts-team.yaml")
DENY_EXEC = "tools:\n  profile: full\n  deny: [exec]\n"
DENY_READ = "tools:\n  profile: full\n  deny: [read]\n"


def test_one_and_two_replicas_serve_without_errors(tmp_path: Path) -> None:
    script = lua_script(tmp_path)
    with replicas(POLICY, 2) as running:
        (one, _), (two, _) = running
        direct = wrk(one + "/v1/decide", SECONDS, CONNECTIONS, script)
        with nginx([one, two], tmp_path) as front:
            both = wrk(front + "/v1/decide", SECONDS, CONNECTIONS, script, threads=2)
    print("\n" + direct.line("one replica") + "\n" + both.line("two replicas behind nginx"))
    assert direct.errors == 0 and both.errors == 0
    assert direct.requests > 0 and both.requests > 0


def test_a_replica_stopped_under_load_is_routed_around(tmp_path: Path) -> None:
    """A replica stopped (SIGTERM: a rollout, a drain) finishes what it is answering and
    nginx sends the rest to the other: not one request fails."""
    script = lua_script(tmp_path)
    with replicas(POLICY, 2) as running, nginx([u for u, _ in running], tmp_path) as front:
        victim = running[1][1]
        stopper = threading.Timer(SECONDS / 3, victim.terminate)
        stopper.start()
        result = wrk(front + "/v1/decide", SECONDS, CONNECTIONS, script)
        stopper.join()
        assert victim.wait(timeout=10) is not None
    print("\n" + result.line("one of two replicas stopped"))
    assert result.errors == 0, result.raw


def test_a_replica_killed_under_load_is_routed_around(tmp_path: Path) -> None:
    """A replica killed (SIGKILL: a crash) loses at most the answers it was writing at that
    instant (nginx has passed their first bytes on and cannot ask again); every later
    request is answered by the other replica."""
    script = lua_script(tmp_path)
    with replicas(POLICY, 2) as running, nginx([u for u, _ in running], tmp_path) as front:
        victim = running[1][1]
        killer = threading.Timer(SECONDS / 3, victim.kill)
        killer.start()
        during = wrk(front + "/v1/decide", SECONDS, CONNECTIONS, script)
        killer.join()
        assert victim.poll() is not None
        after = wrk(front + "/v1/decide", SECONDS, CONNECTIONS, script)
    print("\n" + during.line("one of two replicas killed") + "\n" + after.line("after the kill"))
    assert during.errors <= CONNECTIONS, during.raw
    assert after.errors == 0, after.raw


def test_a_rollout_under_load_never_mixes_revisions(tmp_path: Path) -> None:
    key = make_key(tmp_path / "bundle.key")
    bundles = BundleServer()
    bundles.body = compile_bundle(DENY_EXEC, key, tmp_path / "old.bundle.json")
    interval = 0.5
    with bundles.running():
        flags = ["--bundle-key", str(key), "--poll-interval", str(interval)]
        with replicas(bundles.url, 2, *flags, "--bundle-dir", str(tmp_path / "kept")) as running:
            urls = [u for u, _ in running]
            old = httpx.get(urls[0] + "/v1/status").json()["revision"]
            with nginx(urls, tmp_path) as front:
                answers: list[tuple[str, str, int]] = []
                stop = threading.Event()

                def check() -> None:  # what each answer says, read back from its body
                    with httpx.Client(timeout=10) as client:
                        while not stop.is_set():
                            r = client.post(front + "/v1/decide", json={"tool": "exec"})
                            body = r.json() if r.status_code == 200 else {}
                            answers.append(
                                (body.get("revision"), body.get("verdict"), r.status_code)
                            )

                checkers = [threading.Thread(target=check) for _ in range(2)]
                for t in checkers:
                    t.start()
                load = threading.Thread(
                    target=lambda: results.append(
                        wrk(front + "/v1/decide", SECONDS * 2, CONNECTIONS, lua_script(tmp_path))
                    )
                )
                results: list[object] = []
                load.start()
                time.sleep(SECONDS / 2)
                bundles.body = compile_bundle(DENY_READ, key, tmp_path / "new.bundle.json")
                changed = time.monotonic()
                live: dict[str, float] = {}
                while len(live) < 2 and time.monotonic() - changed < 10:
                    for url in urls:
                        if (
                            url not in live
                            and httpx.get(url + "/v1/status").json()["revision"] != old
                        ):
                            live[url] = time.monotonic() - changed
                    time.sleep(0.02)
                load.join()
                stop.set()
                for t in checkers:
                    t.join()
    new = {r for r, _, _ in answers} - {old}
    print(
        f"\nrollout: new revision live on both replicas after {max(live.values()):.2f} s "
        f"(poll interval {interval} s); {len(answers)} answers checked; {results[0].line('load')}"
    )  # type: ignore[attr-defined]
    assert len(live) == 2 and max(live.values()) <= interval + 1.0
    assert len(new) == 1, "the answers came from more than two revisions"
    assert all(status == 200 for _, _, status in answers)
    for revision, verdict, _ in answers:  # each answer wholly from one revision's policy
        assert verdict == ("deny" if revision == old else "allow"), (revision, verdict)
    assert {r for r, _, _ in answers} == {old, *new}
    assert results[0].errors == 0  # type: ignore[attr-defined]


READ = {
    "tool": "Read",
    "arguments": {"file_path": "/w/a.txt"},
    "context": {"home": "/h", "workspace": "/w"},
}


def test_oversized_and_malformed_requests_through_the_real_server(tmp_path: Path) -> None:
    with replicas(POLICY, 1, "--max-body-bytes", "4096") as running:
        url = running[0][0]
        big = httpx.post(url + "/v1/decide", content=b'{"tool": "' + b"x" * 10_000 + b'"}')
        assert big.status_code == 413 and big.json()["error"]["code"] == "PC520"
        bad = httpx.post(url + "/v1/decide", content=b"\x00{")
        assert bad.status_code == 400 and bad.json()["error"]["code"] == "PC521"
        ok = httpx.post(url + "/v1/decide", json=READ)
        assert ok.status_code == 200 and ok.json()["verdict"] == "allow"
