"""Engine behaviour that contradicts semantics.md, found by holding the engine to this
reference. Each name is a quirk `pipeline.run` can reproduce, so the property test keeps
comparing everything else while the bug is open; tests/test_reference_bugs.py shows each one
on a concrete case (strict xfail: fixing the engine makes it pass, and then its quirk goes)."""

from __future__ import annotations

KNOWN_BUGS: dict[str, str] = {
    "providerless-keeps-gated-tools": (
        "semantics 7.9: with no provider in the context a provider-gated tool (apply_patch) "
        "is removed (fail closed); the engine keeps it"
    ),
    "caller-agent-beats-session-key": (
        "semantics 7.10: the session key is the authority on the agent; a caller-supplied "
        "agent that disagrees is ignored with a diagnostic. The engine resolves "
        "agent='b', session_key='agent:a:main' as agent b, silently: a caller picks the policy"
    ),
    "spawned-by-on-unspawned-run": (
        "semantics 7.10: a spawnedBy for a run that is not spawned is ignored. The engine "
        "takes channel and group from spawnedBy for every run, even one whose own key is "
        "agent:a:slack:group:C2: a caller picks a looser group by naming a spawner"
    ),
    "caller-depth-beats-session-key": (
        "semantics 7.10: the session key is the authority on whether a run is a subagent and "
        "how deep; a disagreeing subagentDepth is ignored with a diagnostic. The engine "
        "honours the caller's: depth 0 on agent:a:subagent:x makes it a main run that skips "
        "layer 10 (the subagent hard deny: gateway, message, sessions_send, ...), and depth 1 "
        "on a two-deep key makes a leaf an orchestrator that keeps sessions_spawn, subagents"
    ),
    "keyless-group-run-not-sandboxed": (
        "semantics 7.6: with no session key, a run that names a channel group is a group "
        "session, so under sandbox mode non-main it is sandboxed. The engine treats every "
        "keyless run as the main session (channel=slack, group=C1: not sandboxed)"
    ),
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
