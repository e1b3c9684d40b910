"""Engine behaviour that contradicts semantics.md, found by holding the engine to this
reference. Each name is a quirk `pipeline.run` can reproduce, so the property test keeps
comparing everything else while the bug is open; tests/test_reference_bugs.py shows each one
on a concrete case (strict xfail: fixing the engine makes it pass, and then its quirk goes).

None is open: the cases of fixed bugs stay in tests/test_reference_bugs.py as regressions."""

from __future__ import annotations

KNOWN_BUGS: dict[str, str] = {}

QUIRKS = frozenset(KNOWN_BUGS)
