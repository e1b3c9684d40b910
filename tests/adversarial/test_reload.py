"""Hot reload under fire: readers resolve continuously while a writer rewrites the policy with
valid, invalid, truncated and deleted versions. No reader sees an exception or a mixed answer."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from policyctl import PolicyError, RunContext, Sender
from policyctl.store import PolicyStore, PolicyUnavailable

VALID_A = (
    "tools:\n  profile: coding\n  deny: [exec, process]\n"
    "agents:\n  entries:\n    a: {tools: {deny: [write]}}\n"
)
VALID_B = (
    "tools:\n  profile: messaging\n  deny: [message]\n"
    "agents:\n  entries:\n    a: {tools: {alsoAllow: [read]}}\n"
)
INVALID = "tools:\n  profile: codng\n"
BROKEN_YAML = "tools: [unclosed\n"
CTX = RunContext(agent="a", sender=Sender(id="1"))


def _answers(tmp_path: Path) -> set[tuple[str, ...]]:
    out = set()
    for i, text in enumerate((VALID_A, VALID_B)):
        path = tmp_path / f"ref{i}.yaml"
        path.write_text(text, encoding="utf-8")
        out.add(PolicyStore(path).resolve(CTX).allowed)
    assert len(out) == 2
    return out


def test_never_valid_fails_closed(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(INVALID, encoding="utf-8")
    errors: list[object] = []
    store = PolicyStore(path, on_error=errors.append)
    assert store.current is None and store.version == 0 and errors
    with pytest.raises(PolicyUnavailable) as exc:
        store.resolve(CTX)
    assert "PC302" in str(exc.value)


def test_last_good_version_stays_in_service(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(VALID_A, encoding="utf-8")
    reported: list[tuple[object, ...]] = []
    store = PolicyStore(path, on_error=reported.append, settle=0)
    good = store.resolve(CTX).allowed
    truncated = VALID_A[: VALID_A.index("exec") + 2]  # "...deny: [ex": cut mid-list
    for bad in (INVALID, BROKEN_YAML, truncated):
        path.write_text(bad, encoding="utf-8")
        assert store.check() is False
        assert store.resolve(CTX).allowed == good and store.version == 1
    path.unlink()
    assert store.check() is False and store.resolve(CTX).allowed == good
    assert [d[0].code for d in reported] == ["PC302", "PC103", "PC103", "PC101"]
    path.write_text(VALID_B, encoding="utf-8")
    assert store.check() is True and store.version == 2 and store.errors == ()
    assert store.resolve(CTX).allowed != good


def test_a_file_still_being_written_is_not_loaded(tmp_path: Path) -> None:
    # The first half of VALID_A is a valid policy without its deny list: looser than either
    # version. Loading it while the writer is between its two writes would widen the policy.
    path = tmp_path / "p.yaml"
    path.write_text(VALID_B, encoding="utf-8")
    store = PolicyStore(path, settle=0.5)
    half = VALID_A[: VALID_A.index("  deny")]
    path.write_text(half, encoding="utf-8")
    assert store.check() is False and store.version == 1  # too fresh: not loaded
    path.write_text(VALID_A, encoding="utf-8")
    assert store.check() is False  # still fresh
    old = time.time() - 1
    os.utime(path, (old, old))
    assert store.check() is True and store.version == 2
    assert "exec" not in store.resolve(CTX).allowed


def test_extended_files_are_watched(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text("tools: {deny: [exec]}\n", encoding="utf-8")
    path = tmp_path / "p.yaml"
    path.write_text("extends: base.yaml\n", encoding="utf-8")
    store = PolicyStore(path, settle=0)
    assert "exec" not in store.resolve(CTX).allowed
    (tmp_path / "base.yaml").write_text("tools: {deny: [read]}\n", encoding="utf-8")
    assert store.check() is True
    assert "exec" in store.resolve(CTX).allowed and "read" not in store.resolve(CTX).allowed


def test_readers_never_see_a_broken_or_mixed_policy(tmp_path: Path) -> None:
    answers = _answers(tmp_path)
    path = tmp_path / "live.yaml"
    path.write_text(VALID_A, encoding="utf-8")
    store = PolicyStore(path, interval=0.002, settle=0.03).start()
    stop = threading.Event()
    failures: list[BaseException] = []
    counts = [0] * 3
    seen: set[tuple[str, ...]] = set()

    def reader(slot: int) -> None:
        i = 0
        while not stop.is_set():
            try:
                # vary the sender so the result cache does not answer everything
                allowed = store.resolve(
                    RunContext(agent="a", sender=Sender(id=str(i % 50)))
                ).allowed
            except BaseException as exc:
                failures.append(exc)
                return
            if allowed not in answers:
                failures.append(AssertionError(f"mixed answer: {allowed}"))
                return
            seen.add(allowed)
            counts[slot] += 1
            i += 1

    def writer() -> None:
        versions = [VALID_B, INVALID, VALID_A, BROKEN_YAML, VALID_B, None, VALID_A]
        n = 0
        while not stop.is_set():
            text = versions[n % len(versions)]
            n += 1
            if text is None:
                path.unlink(missing_ok=True)
            else:
                with open(path, "w", encoding="utf-8") as fh:  # not atomic: readers may see halves
                    fh.write(text[: len(text) // 2])
                    fh.flush()
                    os.fsync(fh.fileno())
                    time.sleep(0.001)
                    fh.write(text[len(text) // 2 :])
            # Longer than `settle` plus a load: with three readers holding the GIL a load takes
            # 50-200 ms here. (A write that lands during a load is caught and retried.)
            time.sleep(0.4)
        writes.append(n)

    writes: list[int] = []
    threads = [threading.Thread(target=reader, args=(i,)) for i in range(3)]
    threads.append(threading.Thread(target=writer))
    start = time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(5.0)
    stop.set()
    for t in threads:
        t.join(timeout=10)
    elapsed = time.perf_counter() - start
    store.stop()
    assert not failures, failures[:3]
    assert seen == answers, "both valid versions should have been served"
    throughput = sum(counts) / elapsed
    print(
        f"\nreload stress: {store.version} swaps, {writes[0]} writes, "
        f"{sum(counts)} resolves by 3 readers in {elapsed:.1f} s ({throughput:,.0f}/s)"
    )
    assert store.version >= 4  # valid versions did get swapped in, several times
    assert throughput > 1000  # a hang guard, not a performance target (see bench/)


def test_policy_error_is_what_load_raises(tmp_path: Path) -> None:
    from policyctl import load_policy

    path = tmp_path / "p.yaml"
    path.write_text(INVALID, encoding="utf-8")
    with pytest.raises(PolicyError):
        load_policy(path)
