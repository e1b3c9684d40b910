"""Loop detection thresholds and detectors (semantics 11)."""

from __future__ import annotations

import pytest

from policyctl.runtime import LoopConfig, LoopDetector
from policyctl.runtime.loopdetect import params_hash


def test_params_hash_ignores_key_order() -> None:
    assert params_hash({"a": 1, "b": "x"}) == params_hash({"b": "x", "a": 1})
    assert params_hash({"a": [1, {"c": 2, "d": 3}]}) == params_hash({"a": [1, {"d": 3, "c": 2}]})
    assert params_hash({"a": 1}) != params_hash({"a": 2})


def test_generic_repeat_warns_at_10_and_vetoes_at_20() -> None:
    d = LoopDetector()
    levels = [d.observe("read", {"path": "x"}).level for _ in range(20)]
    assert levels[:9] == ["ok"] * 9
    assert levels[9:19] == ["warning"] * 10  # calls 10..19
    assert levels[19] == "critical"  # call 20
    v = d.observe("read", {"path": "x"})
    assert v.detector == "generic-repeat" and v.count == 21


def test_different_params_are_different_calls() -> None:
    d = LoopDetector()
    assert all(d.observe("read", {"path": str(i)}).level == "ok" for i in range(100))


def test_history_window_forgets_old_calls() -> None:
    d = LoopDetector(LoopConfig(history=30))
    for _ in range(9):
        d.observe("read", {"p": 1})
    for i in range(30):
        d.observe("other", {"i": i})
    assert d.observe("read", {"p": 1}).level == "ok"  # the nine old ones left the window


def test_ping_pong() -> None:
    d = LoopDetector(LoopConfig(warning=6, critical=12))
    verdicts = [d.observe("a" if i % 2 == 0 else "b", {}) for i in range(12)]
    assert verdicts[5].level == "warning" and verdicts[5].detector == "ping-pong"
    assert verdicts[11].level == "critical" and verdicts[11].detector == "ping-pong"


def test_no_progress_polling_beyond_the_window() -> None:
    d = LoopDetector(LoopConfig(history=20, warning=10, critical=20))
    levels = []
    for i in range(20):
        levels.append(d.observe("process", {"action": "poll"}))
        d.record_result("process", {"action": "poll"}, {"status": "running"})
        for j in (1, 2):  # two others, not one: no ping-pong; the window keeps only 7 polls
            d.observe("other", {"i": i, "j": j})
    assert levels[9].level == "warning" and levels[9].detector == "no-progress"
    assert levels[19].level == "critical"


def test_progress_resets_polling() -> None:
    d = LoopDetector(LoopConfig(history=20, warning=10, critical=20))
    for i in range(40):
        assert d.observe("process", {"action": "poll"}).level == "ok"
        d.record_result("process", {"action": "poll"}, {"output": i})
        for j in (1, 2):  # at most 7 polls in the window: below the warning
            d.observe("other", {"i": i, "j": j})


def test_unknown_tool_calls() -> None:
    d = LoopDetector()
    levels = [d.observe(f"ghost{i}", {}, known=False).level for i in range(20)]
    assert levels[9] == "warning" and levels[19] == "critical"


def test_global_circuit_breaker_at_30() -> None:
    d = LoopDetector()
    for _ in range(9):
        d.observe("x", {})
    flagged = 0
    for _ in range(40):
        if d.observe("x", {}).level != "ok":
            flagged += 1
        if d.flagged >= 30:
            break
    assert d.flagged == 30
    v = d.observe("fresh", {"never": "seen"})
    assert v.level == "critical" and v.detector == "circuit-breaker"


@pytest.mark.parametrize(
    "config", [LoopConfig(warning=2, critical=3), LoopConfig(warning=5, critical=7)]
)
def test_thresholds_are_configurable(config: LoopConfig) -> None:
    d = LoopDetector(config)
    levels = [d.observe("t", {}).level for _ in range(config.critical)]
    assert levels.index("warning") == config.warning - 1
    assert levels[-1] == "critical"


@pytest.mark.parametrize("history", [1, 5, 19])
def test_a_history_too_short_for_the_critical_threshold_is_refused(history: int) -> None:
    with pytest.raises(ValueError, match=r"LoopConfig.history \(\d+\) must be at least"):
        LoopConfig(history=history)  # critical 20: nothing could ever be vetoed


def test_the_shortest_history_allowed_still_vetoes() -> None:
    d = LoopDetector(LoopConfig(history=20))
    levels = [d.observe("read", {"p": 1}).level for _ in range(20)]
    assert levels[9] == "warning" and levels[19] == "critical"
