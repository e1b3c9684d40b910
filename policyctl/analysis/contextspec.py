"""A run context written down (CLI `--context` files, policy test cases), strictly validated."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..context import Capture, RunContext, Sender
from ..formats.strict import StrictModel as _Strict
from ..names import fold


class SenderSpec(_Strict):
    id: str | None = None
    e164: str | None = None
    username: str | None = None
    name: str | None = None


class ContextSpec(_Strict):
    agent: str | None = None
    provider: str | None = None
    model: str | None = None
    channel: str | None = None
    account: str | None = None
    group: str | None = None
    sender: SenderSpec | None = None
    owner: bool = False
    session_key: str | None = Field(None, alias="sessionKey")
    spawned_by: str | None = Field(None, alias="spawnedBy")
    subagent_depth: int | None = Field(None, alias="subagentDepth", ge=0)
    parent_tools: list[str] | None = Field(None, alias="parentTools")
    trigger: Literal["user", "cron", "memory", "skill", "spawn", "gateway"] = "user"
    workspace: str | None = None
    home: str | None = None

    def to_run_context(self) -> RunContext:
        s = self.sender or SenderSpec()
        parent = (
            Capture(tuple(fold(t) for t in self.parent_tools if t.strip()))
            if self.parent_tools is not None
            else None
        )
        return RunContext(
            agent=self.agent,
            provider=self.provider,
            model=self.model,
            channel=self.channel,
            account=self.account,
            group=self.group,
            sender=Sender(s.id, s.e164, s.username, s.name),
            is_owner=self.owner,
            session_key=self.session_key,
            spawned_by=self.spawned_by,
            subagent_depth=self.subagent_depth,
            parent=parent,
            trigger=self.trigger,
            workspace=self.workspace,
            home=self.home,
        )
