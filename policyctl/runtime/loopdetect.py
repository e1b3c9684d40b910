"""Loop detection (semantics 11): stop a model that calls the same thing over and over.

A call's identity is the tool name plus its parameters' canonical JSON (`canonical`): key
order is irrelevant, `1.0` is `1`, but `true` is not `1` and `-1` is not `-2`. The last
`history` calls are kept. Detectors, each counted over that window:
- generic repeat: the same identity again;
- ping-pong: two identities alternating (A B A B ...), counted as the alternating tail;
- no-progress polling: the same identity returning the same result, consecutively;
- unknown tool: calls of tools the run does not have.
A count at `warning` notes a warning and lets the call proceed; at `critical` the call is
vetoed. Every warning-or-worse verdict also counts toward a session-wide circuit breaker:
at `breaker` such verdicts, every further call is vetoed.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Literal

from .canonical import canonical_json

Level = Literal["ok", "warning", "critical"]
_BOOL = "\x00bool"  # the tag of a boolean in a parameters' identity


@dataclass(frozen=True, slots=True)
class LoopConfig:
    """Window and thresholds; refused when they could not work (ValueError names the field).

    history >= critical (a call repeated within a shorter window could never be counted
    `critical` times, so nothing would ever be vetoed), 1 <= warning <= critical,
    breaker >= 1, all whole numbers."""

    history: int = 30
    warning: int = 10
    critical: int = 20
    breaker: int = 30

    def __post_init__(self) -> None:
        for name in ("history", "warning", "critical", "breaker"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"LoopConfig.{name} must be a whole number >= 1, got {value!r}")
        if self.warning > self.critical:
            raise ValueError(
                f"LoopConfig.warning ({self.warning}) must not exceed "
                f"LoopConfig.critical ({self.critical})"
            )
        if self.history < self.critical:
            raise ValueError(
                f"LoopConfig.history ({self.history}) must be at least "
                f"LoopConfig.critical ({self.critical}): repeats are counted within the last "
                f"{self.history} calls, so {self.critical} could never be reached and loop "
                "detection would never veto"
            )


@dataclass(frozen=True, slots=True)
class LoopVerdict:
    level: Level
    detector: str | None = None
    count: int = 0

    @property
    def message(self) -> str:
        if self.level == "ok":
            return ""
        what = {
            "generic-repeat": "the same call repeated",
            "ping-pong": "two calls alternating",
            "no-progress": "polling with no progress",
            "unknown-tool": "calls of a tool this run does not have",
            "circuit-breaker": "too many repeated calls in this session",
        }.get(self.detector or "", self.detector or "")
        return f"loop detected ({self.level}): {what}, {self.count} times"


OK = LoopVerdict("ok")
_NULL_DIGEST = hash(json.dumps(None))


def params_hash(params: dict[str, Any]) -> Hashable:
    """The parameters' identity: equal exactly when their canonical JSON texts are equal.

    Parameters of plain scalars (most calls) are identified by their sorted items, a tuple
    compared by value (not by its hash: `hash(-1) == hash(-2)`), booleans tagged apart from
    the numbers Python makes them equal to; the rest by a digest of `canonical_json`."""
    tagged = False
    for value in params.values():  # a loop, not all(...): this runs on every call
        kind = type(value)
        if kind is bool:
            tagged = True
        elif kind is float:
            if not math.isfinite(value):
                break  # NaN is not equal to itself: only its text identifies it
        elif kind is not str and kind is not int and value is not None:
            break
    else:
        if not tagged:
            return tuple(sorted(params.items()))
        return tuple(sorted((k, (_BOOL, v) if type(v) is bool else v) for k, v in params.items()))
    text = canonical_json(params)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


@dataclass
class LoopDetector:
    config: LoopConfig = field(default_factory=LoopConfig)
    window: deque[tuple[str, Any]] = field(default_factory=deque)
    counts: dict[tuple[str, Any], int] = field(default_factory=dict)
    unknown_in_window: int = 0
    pingpong: int = 0
    last_results: dict[tuple[str, Any], tuple[Any, int]] = field(default_factory=dict)
    flagged: int = 0

    def observe(self, tool: str, params: dict[str, Any], known: bool = True) -> LoopVerdict:
        """Record a call about to be made; say whether it may proceed."""
        return self.observe_hashed(tool, params_hash(params) if known else None)

    def observe_hashed(self, tool: str, params_digest: Hashable | None) -> LoopVerdict:
        """`observe` of a call whose `params_hash` the caller has (None: an unknown tool), so
        a caller that also records the call's result hashes its parameters once."""
        cfg = self.config
        if self.flagged >= cfg.breaker:
            return LoopVerdict("critical", "circuit-breaker", self.flagged)
        known = params_digest is not None
        identity = (tool, params_digest)
        window = self.window
        if len(window) >= cfg.history:
            old = window.popleft()
            left = self.counts[old] - 1
            if left:
                self.counts[old] = left
            else:
                del self.counts[old]
            if old[1] is None:
                self.unknown_in_window -= 1
        # ping-pong: the new call equals the one two back and differs from the previous one
        if len(window) >= 2 and window[-2] == identity and window[-1] != identity:
            self.pingpong = self.pingpong + 1 if self.pingpong else 3
        else:
            self.pingpong = 0
        window.append(identity)
        repeats = self.counts.get(identity, 0) + 1
        self.counts[identity] = repeats
        if not known:
            self.unknown_in_window += 1
        last = self.last_results.get(identity)
        polled = last[1] + 1 if last is not None else 0
        detector, count = "generic-repeat", repeats
        if not known and self.unknown_in_window >= count:
            detector, count = "unknown-tool", self.unknown_in_window
        if self.pingpong > count:
            detector, count = "ping-pong", self.pingpong
        if polled > count:
            detector, count = "no-progress", polled
        if count < cfg.warning:
            return OK
        if count >= cfg.critical:
            self.flagged += 1
            return LoopVerdict("critical", detector, count)
        if count >= cfg.warning:
            self.flagged += 1
            return LoopVerdict("warning", detector, count)
        return OK

    def record_result(self, tool: str, params: dict[str, Any], result: Any) -> None:
        """Note a call's outcome: the same result again for the same call is no progress."""
        self.record_hashed(tool, params_hash(params), result)

    def record_hashed(self, tool: str, params_digest: Hashable, result: Any) -> None:
        """`record_result` of a call whose `params_hash` the caller has."""
        identity = (tool, params_digest)
        digest: object
        if result is None:  # what most tools return: the digest below, without encoding it
            digest = _NULL_DIGEST
        elif isinstance(result, str):
            digest = hash(result)
        else:
            try:
                digest = hash(json.dumps(result, sort_keys=True, default=str))
            except Exception:  # no text (a cycle, a __str__ that raises): never "the same"
                digest = object()
        previous = self.last_results.get(identity)
        if previous is not None and previous[0] == digest:
            self.last_results[identity] = (digest, previous[1] + 1)
        else:
            self.last_results[identity] = (digest, 1)
