"""A nanobot request -> the policyctl run it is.

nanobot hands every tool the request it serves through a context variable
(`RequestContext`: channel, chat id, session key, sender id, metadata, workspace). This module
reads that into a `RunContext`. Where nanobot's request does not say something policyctl
decides on, the reading is the narrower one: a chat whose kind nanobot does not mark, on a
channel other than the local ones, is read as a group chat (group rules apply), never as a
direct message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...context import RunContext, Sender

#: channels where nanobot talks to its own operator on this machine: no group, no stranger
LOCAL_CHANNELS = frozenset({"cli", "sdk", "api", "system"})
#: metadata values nanobot's channels use for a chat with more than one person
GROUP_CHAT_TYPES = frozenset({"group", "supergroup", "channel", "guild", "room", "mpim"})


@dataclass(frozen=True)
class RunFacts:
    """What the operator knows of this nanobot instance that its requests do not carry."""

    agent: str | None = None
    provider: str | None = None
    model: str | None = None
    #: sender ids of the owner (nanobot has no notion of one; `cron` and `my` are owner-only)
    owners: frozenset[str] = field(default_factory=frozenset)
    home: str | None = None


def group_of(
    channel: str, chat_id: str | None, sender_id: str | None, meta: Mapping[str, Any]
) -> str | None:
    """The group a request comes from, or None for a direct chat."""
    if channel in LOCAL_CHANNELS or not chat_id:
        return None
    marked = meta.get("is_group")
    if marked is True or meta.get("chat_type") in GROUP_CHAT_TYPES:
        return chat_id
    if marked is False:
        return None
    # unmarked: a chat that is not the sender's own is read as a group (the narrower reading)
    return None if chat_id == sender_id else chat_id


def cron_job_of(meta: Mapping[str, Any]) -> str | None:
    """The job id when nanobot's scheduler started this turn (its trigger rides in the
    metadata), else None."""
    from nanobot.cron.session_turns import cron_trigger

    trigger = cron_trigger(dict(meta))
    if not trigger:
        return None
    job = trigger.get("job_id")
    return job if isinstance(job, str) and job else "job"


def session_key(
    agent: str | None, channel: str, group: str | None, sender_id: str | None, cron_job: str | None
) -> str:
    """The policyctl session key of a nanobot request, in the grammar policyctl reads (semantics
    7.10: the key is the authority on channel and group). nanobot's own keys
    (`telegram:12345`) say neither, so they are not handed on: one written from the same facts
    as the other fields can never disagree with them."""
    prefix = f"agent:{agent or 'main'}"
    if cron_job is not None:
        return f"{prefix}:cron:{cron_job}"
    if channel in LOCAL_CHANNELS or not channel:
        return f"{prefix}:main"
    if group is not None:
        return f"{prefix}:{channel}:group:{group}"
    return f"{prefix}:{channel}:dm:{sender_id or 'unknown'}"


def run_context(request: Any, facts: RunFacts) -> RunContext:
    """The main run a nanobot request is (a subagent's run is derived from it by
    `pipeline.lineage.child_context`). `request` is nanobot's RequestContext, or None when no
    request is being served: then the run is the instance's base context, with no channel and
    no sender."""
    if request is None:
        return RunContext(
            agent=facts.agent, provider=facts.provider, model=facts.model, home=facts.home
        )
    meta: Mapping[str, Any] = request.metadata or {}
    channel = request.channel or ""
    sender_id = request.sender_id
    group = group_of(channel, request.chat_id, sender_id, meta)
    job = cron_job_of(meta)
    return RunContext(
        agent=facts.agent,
        provider=facts.provider,
        model=facts.model,
        channel=None if channel in LOCAL_CHANNELS else channel or None,
        group=group,
        sender=Sender(id=sender_id) if sender_id else Sender(),
        is_owner=bool(sender_id) and sender_id in facts.owners,
        session_key=session_key(facts.agent, channel, group, sender_id, job),
        trigger="cron" if job is not None else "user",
        workspace=None if request.workspace is None else str(request.workspace),
        home=facts.home,
    )
