"""Entry points: every way a run starts, each building a context for the same resolver.

A normal turn, a skill slash-command that dispatches straight to a tool (it must go through
the full pipeline: GHSA-mhm4-93fw-4qr2 was such a shortcut that applied only the owner-only
filter), a scheduled job, a spawned subagent, and the memory flush. None of them has a way
around `resolve` and the call gate.

The policy is a `CompiledPolicy` or a `PolicyStore` (hot reload). With a store, each run takes
the version in service when it starts and keeps it to its end: a reload lands between turns,
never inside one. Loop detection is per session (one detector per session key, kept for the
`sessions` most recently active sessions); a run without a session key gets its own.
"""

from __future__ import annotations

import itertools
import os
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..compile.compiled import CompiledPolicy
from ..context import RunContext
from ..diagnostics import Diagnostic
from ..pipeline.lineage import LeafCannotSpawn, child_context
from ..pipeline.resolve import cap_cron_tools, log_context_warnings, resolve
from ..pipeline.result import NoCallableToolsError, Resolution
from .agent import RunResult, run_loop
from .approvals import Approver, SessionGrants, warn_asks_without_approver
from .gate import RESULT_LIMIT, CallGate, Outcome, Veto, check_gate_options
from .hooks import APPROVAL_TIMEOUT, HOOK_TIMEOUT, Hook, Observer
from .loopdetect import LoopConfig, LoopDetector
from .providers import Provider
from .registry import RefusalDetail, ToolRegistry
from .store import PolicyStore, PolicyUnavailable

if TYPE_CHECKING:
    from ..callrules import LayerCallRules

_JOB_IDS = itertools.count(1)


@dataclass(frozen=True)
class CronJob:
    """A scheduled job, capped at creation to the tools of the run that created it."""

    id: str
    prompt: str
    tools_allow: tuple[str, ...]
    dropped: tuple[str, ...]
    warnings: tuple[Diagnostic, ...]
    agent: str | None
    channel: str | None
    account: str | None
    group: str | None
    #: the creator's call rules: the job never makes a call its creator could not
    calls: tuple[LayerCallRules, ...] = ()
    workspace: str | None = None
    home: str | None = None


class SpawnRefused(Exception):
    """A leaf subagent tried to spawn (maxSpawnDepth reached)."""


class Runtime:
    def __init__(
        self,
        policy: CompiledPolicy | PolicyStore,
        registry: ToolRegistry,
        provider: Provider,
        *,
        hooks: Sequence[Hook] = (),
        observers: Sequence[Observer] = (),
        approver: Approver | None = None,
        loop_config: LoopConfig | None = None,
        max_iterations: int = 20,
        max_continuations: int = 3,
        refusal_detail: RefusalDetail = "layer",
        result_limit: int = RESULT_LIMIT,
        hook_timeout: float = HOOK_TIMEOUT,
        approval_timeout: float = APPROVAL_TIMEOUT,
        tool_timeout: float | None = None,
        sessions: int = 10_000,
        workspace: str | os.PathLike[str] | None = None,
        home: str | os.PathLike[str] | None = None,
    ) -> None:
        for label, value, least in (
            ("max_iterations", max_iterations, 1),
            ("sessions", sessions, 1),
            ("max_continuations", max_continuations, 0),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{label} must be a whole number >= {least}, got {value!r}")
        self.source = policy
        self.registry = registry
        self.provider = provider
        self.hooks = tuple(hooks)
        self.observers = tuple(observers)
        self.approver = approver
        self.loop_config = loop_config or LoopConfig()
        self.max_iterations = max_iterations
        self.max_continuations = max_continuations
        self.gate_options: dict[str, Any] = {
            "refusal_detail": refusal_detail,
            "result_limit": result_limit,
            "hook_timeout": hook_timeout,
            "approval_timeout": approval_timeout,
            "tool_timeout": tool_timeout,
        }
        self.sessions = sessions
        # where path call rules are anchored for a run whose context does not say
        self.workspace = None if workspace is None else os.fspath(workspace)
        self.home = None if home is None else os.fspath(home)
        self._loops: OrderedDict[str, LoopDetector] = OrderedDict()
        self._grants: OrderedDict[str, SessionGrants] = OrderedDict()
        check_gate_options(**self.gate_options)  # refused now, not at the first call

    @property
    def policy(self) -> CompiledPolicy:
        """The compiled policy in service now (with a store: its current version)."""
        if isinstance(self.source, PolicyStore):
            current = self.source.current
            if current is None:
                raise PolicyUnavailable(str(self.source.path), self.source.errors)
            return current
        return self.source

    # -- the single pipeline ------------------------------------------------------------------

    def resolve(
        self, ctx: RunContext, *, require_tools: bool = True, policy: CompiledPolicy | None = None
    ) -> Resolution:
        """Every entry point resolves here: the compiled policy, over the registered tools."""
        policy = self.policy if policy is None else policy  # one read: one version per run
        log_context_warnings(policy, ctx)  # PC450-PC454: a typo in the context
        if (ctx.workspace is None and self.workspace) or (ctx.home is None and self.home):
            ctx = replace(
                ctx, workspace=ctx.workspace or self.workspace, home=ctx.home or self.home
            )
        return resolve(
            policy, ctx, self.registry.inventory(policy.catalog), require_tools=require_tools
        )

    def loop_detector(self, session_key: str | None) -> LoopDetector:
        """The session's loop detector (a new one for a run without a session key)."""
        key = session_key
        if key is None:
            return LoopDetector(self.loop_config)
        detector = self._loops.get(key)
        if detector is None:
            detector = self._loops[key] = LoopDetector(self.loop_config)
            while len(self._loops) > self.sessions:
                self._loops.popitem(last=False)
        else:
            self._loops.move_to_end(key)
        return detector

    def session_grants(self, session_key: str | None) -> SessionGrants:
        """The calls a person allowed "for the session" in this session (a run without a
        session key gets its own, which ends with it). Kept for the `sessions` most recently
        active sessions, like loop detection."""
        if session_key is None:
            return SessionGrants()
        grants = self._grants.get(session_key)
        if grants is None:
            grants = self._grants[session_key] = SessionGrants()
            while len(self._grants) > self.sessions:
                self._grants.popitem(last=False)
        else:
            self._grants.move_to_end(session_key)
        return grants

    def gate(self, resolution: Resolution) -> CallGate:
        """The gate every call of a run passes: the run's call rules decide each one."""
        if self.approver is None:
            warn_asks_without_approver(resolution)
        key = resolution.context.session_key
        return CallGate(
            resolution,
            self.registry,
            hooks=self.hooks,
            observers=self.observers,
            approver=self.approver,
            loop=self.loop_detector(key),
            grants=self.session_grants(key),
            **self.gate_options,
        )

    async def _run(self, ctx: RunContext, messages: list[dict[str, Any]]) -> RunResult:
        try:
            resolution = self.resolve(ctx)
        except NoCallableToolsError as exc:
            # stop before the model is asked (semantics 8)
            return RunResult(messages, stopped=f"no-tools: {exc}")
        return await run_loop(
            self.provider,
            self.gate(resolution),
            messages,
            max_iterations=self.max_iterations,
            max_continuations=self.max_continuations,
        )

    # -- entry points -------------------------------------------------------------------------

    async def run_turn(
        self, ctx: RunContext, message: str, history: Sequence[dict[str, Any]] = ()
    ) -> RunResult:
        """A normal agent turn."""
        return await self._run(ctx, [*history, {"role": "user", "content": message}])

    async def run_skill_command(self, ctx: RunContext, tool: str, arguments: Any) -> Outcome:
        """A slash-command that dispatches straight to a tool: the full pipeline, then the gate."""
        try:
            resolution = self.resolve(replace(ctx, trigger="skill"))
        except NoCallableToolsError as exc:
            return Outcome(tool, False, None, Veto(tool, "policy", str(exc)))
        return await self.gate(resolution).call(tool, arguments)

    def schedule_cron_job(
        self, creator_ctx: RunContext, prompt: str, tools_allow: Sequence[str] | None = None
    ) -> CronJob:
        """Create a job: its tools are capped at the creating run's tools, and what the cap
        drops is reported (PC407), not silently lost."""
        policy = self.policy
        creator = self.resolve(creator_ctx, require_tools=False, policy=policy)
        cap = cap_cron_tools(creator, tools_allow, policy.catalog)
        eff = creator.context
        return CronJob(
            f"job{next(_JOB_IDS)}",
            prompt,
            cap.tools_allow,
            cap.dropped,
            cap.warnings,
            eff.agent,
            eff.channel,
            eff.account,
            eff.group,
            cap.calls,
            creator_ctx.workspace,
            creator_ctx.home,
        )

    def cron_context(self, job: CronJob) -> RunContext:
        """A scheduled run: trigger cron, no sender identity, the job's capped tool list."""
        from ..context import Capture

        return RunContext(
            agent=job.agent,
            channel=job.channel,
            account=job.account,
            group=job.group,
            trigger="cron",
            session_key=f"agent:{job.agent or 'main'}:cron:{job.id}",
            parent=Capture(job.tools_allow, (), "cron job toolsAllow", job.calls),
            workspace=job.workspace,
            home=job.home,
        )

    async def run_cron_job(self, job: CronJob) -> RunResult:
        return await self._run(self.cron_context(job), [{"role": "user", "content": job.prompt}])

    def subagent_context(
        self, parent_ctx: RunContext, parent: Resolution, child_id: str | None = None
    ) -> RunContext:
        """A child run of `parent` (see `lineage.child_context`); a leaf cannot spawn."""
        try:
            child = child_context(parent_ctx, parent, child_id)
        except LeafCannotSpawn as exc:
            raise SpawnRefused(str(exc)) from None
        # the child works where its parent works: its path rules are anchored there too
        return replace(child, workspace=parent_ctx.workspace, home=parent_ctx.home)

    async def spawn_subagent(
        self, parent_ctx: RunContext, parent: Resolution, task: str, child_id: str | None = None
    ) -> RunResult:
        return await self._run(
            self.subagent_context(parent_ctx, parent, child_id), [{"role": "user", "content": task}]
        )

    async def run_memory_flush(self, ctx: RunContext, instructions: str) -> RunResult:
        """The memory flush keeps only the catalog's memory tools (read and write)."""
        return await self._run(
            replace(ctx, trigger="memory"), [{"role": "user", "content": instructions}]
        )
