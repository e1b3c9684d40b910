"""A context's cache keys are derived from its fields: two runs that differ in any compared
field never share a cached answer, whatever field is added to `RunContext` later."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

import pytest

from policyctl import Capture, RunContext, Sender
from policyctl.pipeline.engine import _raw_key

#: a value other than the default, for each field a run is told apart by
OTHER: dict[str, Any] = {
    "agent": "coder",
    "provider": "openai",
    "model": "gpt-5.4-mini",
    "channel": "slack",
    "account": "work",
    "group": "C1",
    "sender": Sender(id="42"),
    "is_owner": True,
    "session_key": "agent:coder:main",
    "spawned_by": "agent:coder:main",
    "subagent_depth": 1,
    "parent": Capture(allow=("read",)),
    "trigger": "cron",
}


def test_every_compared_field_has_a_different_value_here() -> None:
    compared = {f.name for f in fields(RunContext) if f.compare}
    assert compared == set(OTHER), "a new RunContext field: give it a value in OTHER"


@pytest.mark.parametrize("name", sorted(OTHER))
def test_a_run_that_differs_in_one_field_has_another_key(name: str) -> None:
    base = RunContext()
    other = replace(base, **{name: OTHER[name]})
    assert other != base
    assert hash(other) != hash(base)
    if name == "sender":  # the sender is decided per sender, after the shared shape
        assert _raw_key(other) == _raw_key(base)
    else:
        assert _raw_key(other) != _raw_key(base)


def test_workspace_and_home_share_one_answer() -> None:
    base = RunContext(agent="coder")
    moved = replace(base, workspace="/srv/a", home="/home/a")
    assert moved == base and hash(moved) == hash(base) and _raw_key(moved) == _raw_key(base)
