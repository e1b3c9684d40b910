"""Decision logs: one JSON line per decision, on stdout or appended to a file.

The file is written by `hosts.decisionlog.append_record` (one `write` per record on a file
opened for appending, so lines of concurrent requests never interleave); stdout lines are
written under a lock for the same reason.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any

from ..hosts.decisionlog import append_record


class DecisionLog:
    def __init__(self, target: str | None) -> None:
        #: None: no log; "-": stdout; else a file path
        self.target = target
        self._lock = threading.Lock()

    def write(self, record: Mapping[str, Any]) -> str | None:
        """Write one record; the problem as text when it could not be written, else None."""
        if self.target is None:
            return None
        if self.target != "-":
            return append_record(self.target, record)
        stamped = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **record}
        line = json.dumps(stamped, ensure_ascii=True, separators=(",", ":"), default=str)
        try:
            with self._lock:
                sys.stdout.write(line + "\n")
                sys.stdout.flush()
        except (OSError, ValueError) as exc:
            return f"the decision log on stdout cannot be written ({exc})"
        return None
