"""A context whose fields disagree resolves to the narrower reading, with a warning (PC440).

Each row is a context whose fields tell two stories, the two stories written as contexts that
tell only one, and what the narrower reading must do. The run may never hold a tool that
either story would refuse: every layer only narrows, so the reading with more layers (a
group's policy, the subagent layer, the sandbox under non-main) is the one taken.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import MakePolicy, removed_at, run

from policyctl import Capture

POLICY = """
agents:
  defaults:
    sandbox: {mode: non-main}
    subagents: {maxSpawnDepth: 2}
channels:
  slack:
    groups:
      C1:
        tools: {deny: [exec]}
"""

MAIN = "agent:main:main"
GROUP = "agent:main:slack:group:C1"
#: the layer that must remove a tool in the narrower reading: 7 group, 9 sandbox, 10 subagent
GROUP_SAYS = {"exec": 7}
SANDBOXED = {"web_fetch": 9}
SUBAGENT = {"session_status": 10}
LEAF = {"sessions_spawn": 10}
ROWS: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any], dict[str, int]]] = [
    (
        "a main-session key spawned by a group session",
        {"session_key": MAIN, "spawned_by": GROUP},
        {"session_key": MAIN},
        {"session_key": "agent:main:subagent:x", "spawned_by": GROUP},
        GROUP_SAYS | SANDBOXED | SUBAGENT,
    ),
    (
        "a sender in a DM with a group id",
        {"session_key": "agent:main:slack:dm:u1", "group": "C1", "sender": {"id": "u1"}},
        {"session_key": "agent:main:slack:dm:u1", "sender": {"id": "u1"}},
        {"session_key": GROUP, "sender": {"id": "u1"}},
        GROUP_SAYS | SANDBOXED,
    ),
    (
        "a main-session key with a group id",
        {"session_key": MAIN, "channel": "slack", "group": "C1"},
        {"session_key": MAIN},
        {"session_key": GROUP},
        GROUP_SAYS | SANDBOXED,
    ),
    (
        "a subagent key with a group id and no spawning session",
        {"session_key": "agent:main:subagent:x", "channel": "slack", "group": "C1"},
        {"session_key": "agent:main:subagent:x"},
        {"session_key": "agent:main:subagent:x", "spawned_by": GROUP},
        GROUP_SAYS | SANDBOXED | SUBAGENT,
    ),
    (
        "subagent depth 0 with a spawning session",
        {"spawned_by": MAIN, "subagent_depth": 0},
        {"agent": "main"},
        {"session_key": "agent:main:subagent:x"},
        SANDBOXED | SUBAGENT,
    ),
    (
        "subagent depth 0 with a parent's tools",
        {"agent": "main", "subagent_depth": 0, "parent": Capture(("read", "session_status"))},
        {"agent": "main", "parent": Capture(("read", "session_status")), "trigger": "cron"},
        {"session_key": "agent:main:subagent:x", "parent": Capture(("read", "session_status"))},
        SANDBOXED | SUBAGENT,
    ),
    (
        "the spawn trigger on a main-session key",
        {"session_key": MAIN, "trigger": "spawn"},
        {"session_key": MAIN},
        {"session_key": "agent:main:subagent:x"},
        SANDBOXED | SUBAGENT,
    ),
    (
        "a subagent key spawned by a subagent (a flat key cannot say its depth)",
        {"session_key": "agent:main:subagent:y", "spawned_by": "agent:main:subagent:x"},
        {"session_key": "agent:main:subagent:y"},
        {"session_key": "agent:main:subagent:x:subagent:y"},
        SANDBOXED | SUBAGENT | LEAF,
    ),
]


@pytest.mark.parametrize(
    ("fields", "one", "other", "removed"),
    [row[1:] for row in ROWS],
    ids=[row[0] for row in ROWS],
)
def test_disagreeing_fields_take_the_narrower_reading(
    make_policy: MakePolicy,
    fields: dict[str, Any],
    one: dict[str, Any],
    other: dict[str, Any],
    removed: dict[str, int],
) -> None:
    policy = make_policy(POLICY)
    res = run(policy, require_tools=False, **fields)
    for tool, stage in removed.items():
        assert removed_at(res, tool) == stage, (tool, res.context.to_json())
    # never a tool either reading refuses
    for story in (one, other):
        alone = run(policy, require_tools=False, **story)
        assert set(res.allowed) <= set(alone.allowed), sorted(set(res.allowed) - set(alone.allowed))
    # and the warning says which reading was taken and why
    said = [w for w in res.warnings if w.code == "PC440"]
    assert said and "the narrower reading was taken" in said[0].message, res.warnings


@pytest.mark.parametrize(
    "fields",
    [
        {"session_key": GROUP},
        {"session_key": "agent:main:subagent:x", "spawned_by": GROUP},
        {"channel": "slack", "group": "C1"},
        # a cron job's toolsAllow is handed down to a scheduled run, not to a subagent
        {"agent": "main", "trigger": "cron", "parent": Capture(("read",), (), "cron job")},
        {"session_key": "agent:main:subagent:x:subagent:y", "spawned_by": "agent:main:subagent:x"},
    ],
)
def test_agreeing_fields_raise_no_warning(make_policy: MakePolicy, fields: dict[str, Any]) -> None:
    res = run(make_policy(POLICY), require_tools=False, **fields)
    assert not [w for w in res.warnings if w.code == "PC440"], res.warnings


def test_a_cron_run_with_its_jobs_tools_is_no_subagent(make_policy: MakePolicy) -> None:
    res = run(
        make_policy(POLICY),
        require_tools=False,
        agent="main",
        trigger="cron",
        parent=Capture(("read", "session_status"), (), "cron job"),
    )
    assert "session_status" in res.allowed


def test_the_key_still_decides_between_two_groups(make_policy: MakePolicy) -> None:
    """Where the key names a group, a caller's other group is ignored (PC406), not added."""
    res = run(make_policy(POLICY), session_key=GROUP, channel="slack", group="C2")
    assert removed_at(res, "exec") == 7
    assert [w.code for w in res.warnings if w.code in ("PC406", "PC440")] == ["PC406"]


def test_a_scheduled_runs_group_applies_without_a_warning(make_policy: MakePolicy) -> None:
    """A cron key (`cron:<job>`) never names a group: the job's group is no disagreement."""
    fields = {"session_key": "agent:main:cron:j1", "trigger": "cron"}
    res = run(make_policy(POLICY), require_tools=False, channel="slack", group="C1", **fields)
    assert removed_at(res, "exec") == 7
    assert not [w for w in res.warnings if w.code in ("PC406", "PC440")], res.warnings
