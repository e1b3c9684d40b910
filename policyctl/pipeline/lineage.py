"""Lineage: the context of a run spawned by another run (semantics 7.7 and 7.8)."""

from __future__ import annotations

import uuid

from ..context import RunContext, parse_session_key
from .result import Resolution


class LeafCannotSpawn(Exception):
    """The parent is a leaf subagent (maxSpawnDepth reached)."""


def child_context(
    parent_ctx: RunContext, parent: Resolution, child_id: str | None = None
) -> RunContext:
    """A child run: same agent, provider, sender and owner flag; the parent's session (or the
    session that spawned it) as the spawning session, so the child keeps its channel and group;
    one level deeper; the parent's capture (tools and call rules) as its inheritance layer; the
    parent's workspace and home, which its path call rules are anchored at."""
    if parent.context.role == "leaf":
        raise LeafCannotSpawn(
            f"a leaf subagent (depth {parent.context.subagent_depth}) cannot spawn"
        )
    own = parse_session_key(parent_ctx.session_key)
    agent = parent.context.agent or own.agent or "main"
    child = child_id or uuid.uuid4().hex[:12]
    if parent_ctx.session_key and own.is_subagent:
        key = f"{parent_ctx.session_key}:subagent:{child}"
    else:
        key = f"agent:{agent}:subagent:{child}"
    spawned_by = (
        parent_ctx.spawned_by
        if own.is_subagent and parent_ctx.spawned_by
        else parent_ctx.session_key
    )
    return RunContext(
        agent=agent,
        provider=parent_ctx.provider,
        model=parent_ctx.model,
        sender=parent_ctx.sender,
        is_owner=parent_ctx.is_owner,
        session_key=key,
        spawned_by=spawned_by,
        subagent_depth=parent.context.subagent_depth + 1,
        parent=parent.capture(),
        trigger="spawn",
        workspace=parent_ctx.workspace,
        home=parent_ctx.home,
    )
