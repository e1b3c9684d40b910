"""Engine behaviour that contradicts semantics.md, found by holding the engine to this
reference. Each name is a quirk `pipeline.run` can reproduce, so the property test keeps
comparing everything else while the bug is open; tests/test_reference_bugs.py shows each one
on a concrete case (strict xfail: fixing the engine makes it pass, and then its quirk goes)."""

from __future__ import annotations

KNOWN_BUGS: dict[str, str] = {
    "channel-only-from-group-keys": (
        "semantics 7.4/7.10: the session key is the authority on the channel. The engine reads "
        "the channel only from group keys: for agent:a:slack:dm:u1 the run's channel is the "
        "caller's (None, or telegram if the caller says so), so channel-scoped sender rules "
        "(channel:slack:<id>) never apply in a DM session and a caller can pick the channel"
    ),
    "labels-name-the-sender-table": (
        "semantics 7 (labels are OpenClaw's): layer 8 is labelled tools.toolsBySender and "
        "layer 7 group tools.allow. The engine labels a match from an agent's own sender table "
        "agents.<id>.tools.toolsBySender and a group's sender rule group tools.toolsBySender "
        "(more precise, but not the labels operators know from OpenClaw's logs)"
    ),
}

QUIRKS = frozenset(KNOWN_BUGS)
