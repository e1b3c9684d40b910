"""Result: the answer for one run (`Resolution`), and the audit trail behind it, built lazily.

The engine caches an `Answer` (the run's layer plans and per-layer bitmasks); every resolve
wraps it in a fresh `Resolution`. Which tools are allowed is one lookup away; the audit trail
(which entry removed which tool, where it is written) is worked out the first time someone
reads `removed` or `layers`, by `match.decide`, the single-tool form of the rule whose bitmask
form computed the answer. `explain` renders this value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..catalog.inventory import Inventory, Tool
from ..catalog.model import Catalog
from ..compile.compiled import CompiledPolicy
from ..compile.entries import Entry, Hit
from ..compile.layers import Layer, LayerPlan, LayerPolicy, spec
from ..context import Capture, RunContext, Sender
from ..diagnostics import Diagnostic, Source
from ..located import list_path
from ..names import fold
from .context import EffectiveContext
from .match import InventoryIndex, RuleKind, decide, iter_bits
from .select import Shape
from .warnings import unknown_context_values, unknown_entry_warnings

if TYPE_CHECKING:
    from ..callrules.model import CallDecision, LayerCallRules
    from ..callrules.subject import CallEnvironment


@dataclass(frozen=True, slots=True)
class RemovedTool:
    tool: str
    stage: int
    label: str
    kind: RuleKind
    entry: str | None
    expanded_from: str | None
    source: Source | None
    scope: str
    written_as: str | None = None
    origin: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "tool": self.tool,
            "stage": self.stage,
            "label": self.label,
            "kind": self.kind,
            "entry": self.entry,
            "expandedFrom": self.expanded_from,
            "source": (
                {"file": self.source.file, "line": self.source.line, "column": self.source.column}
                if self.source
                else None
            ),
        }


@dataclass(frozen=True, slots=True)
class LayerTrace:
    stage: int
    name: str
    label: str
    applied: bool
    skip_reason: str | None
    removed: tuple[str, ...]
    scope: str | None
    restrictive: bool
    #: which of several candidate rules applied and which were skipped, and why
    detail: str | None = None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "stage": self.stage,
            "label": self.label,
            "applied": self.applied,
            "skipReason": self.skip_reason,
            "removed": list(self.removed),
        }
        if self.detail is not None:
            out["detail"] = self.detail
        return out


@dataclass(frozen=True, slots=True, eq=False)
class Answer:
    """What the engine computed for one context over one inventory; cached, shared, frozen."""

    #: the catalog, not the policy: nothing a resolver caches keeps its policy alive
    catalog: Catalog
    index: InventoryIndex
    ctx: RunContext
    shape: Shape
    sender: Sender
    plans: tuple[LayerPlan, ...]
    verdicts: tuple[tuple[int, int], ...]
    #: the construction masks: owner-only, optional plugin tools not named, provider-gated
    construction: tuple[int, int, int]
    alive: int
    #: the allowed tool names, in inventory order
    allowed: tuple[str, ...]
    notes: tuple[Diagnostic, ...]
    #: the labels of the allow lists that left no tools (empty while tools remain)
    emptied: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Emptied:
    """Why a run has no tools: the layer that removed the last ones and how."""

    plan: LayerPlan
    #: "deny" when a deny removed the last tools, "allow" when an allow list left them out
    kind: RuleKind
    #: for a deny, the list it is written in; for allow lists, every layer label that narrowed
    labels: tuple[str, ...]
    source: Source | None
    #: the document path of the deny entry (`tools.deny[0]`) or of the allow list
    key: str
    #: the deny entry as written
    entry: str | None = None
    #: the layers whose allow lists removed tools on the way (the last one included for
    #: an allow-list emptying)
    narrowed: tuple[LayerPlan, ...] = ()


class Resolution:
    """The tools one run may use (`allowed`) and why each other tool is gone (`removed`,
    `layers`), with the run's `context` and `warnings`. Immutable; the trail is computed on
    first use and kept by this object (not by the engine's cache)."""

    __slots__ = ("_a", "_call_env", "_calls", "_context", "_ctx", "_policy", "_trail", "_warnings")

    def __init__(
        self, answer: Answer, policy: CompiledPolicy, ctx: RunContext | None = None
    ) -> None:
        self._a = answer
        #: the caller's context: the cached answer may have been computed for an equal one
        #: with another workspace, home or parent call rules (out of equality on purpose)
        self._ctx = ctx if ctx is not None else answer.ctx
        self._calls: tuple[LayerCallRules, ...] | None = None
        self._call_env: CallEnvironment | None = None
        #: held by this result (never by the engine's cache): its warnings read the policy
        self._policy = policy
        self._context: EffectiveContext | None = None
        self._trail: (
            tuple[tuple[RemovedTool, ...], tuple[LayerTrace, ...], dict[str, RemovedTool]] | None
        ) = None
        self._warnings: tuple[Diagnostic, ...] | None = None

    # -- the answer: cheap ------------------------------------------------------------------

    @property
    def policy(self) -> CompiledPolicy:
        """The compiled policy this run was resolved under."""
        return self._policy

    @property
    def allowed(self) -> tuple[str, ...]:
        """Allowed tool names, in inventory order."""
        return self._a.allowed

    def is_allowed(self, tool: str) -> bool:
        pos = self._a.index.position.get(tool)
        return pos is not None and bool(self._a.alive >> pos & 1)

    def allows(self, tool: Tool) -> bool:
        """Whether this very tool may run: its name is allowed and it is the tool this run was
        resolved for (same plugin id and optional flag), not one registered under that name
        since (a plugin reload, an MCP reconnect). Tools are interned, so the usual answer is
        one identity test; a tool the inventory normalised is compared field by field."""
        a = self._a
        pos = a.index.position.get(tool.name)
        if pos is None or not a.alive >> pos & 1:
            return False
        known = a.index.inventory.tools[pos]
        if known is tool:
            return True
        plugin = fold(tool.plugin_id) if tool.plugin_id else None
        return known.plugin_id == plugin and known.optional == (tool.optional and bool(plugin))

    @property
    def selection_notes(self) -> tuple[Diagnostic, ...]:
        """What layer selection said of this run (among `warnings`: a scheduled run of an
        account with no configuration, PC409), without the unknown-name checks `warnings`
        adds: `validate` asks it of every run left with no tools."""
        return self._a.shape.notes

    @property
    def plans(self) -> tuple[LayerPlan, ...]:
        """The eleven layer plans of this run (policy or skip reason), in order."""
        return self._a.plans

    @property
    def inventory(self) -> Inventory:
        return self._a.index.inventory

    @property
    def inherited_deny(self) -> tuple[str, ...]:
        parent = self._a.ctx.parent
        return parent.deny if parent is not None else ()

    @property
    def run_context(self) -> RunContext:
        """The caller's own context, with the workspace and home its call rules read."""
        return self._ctx

    @property
    def context(self) -> EffectiveContext:
        if self._context is None:
            a = self._a
            self._context = EffectiveContext.of(a.shape.facts, a.ctx, a.sender)
        return self._context

    @property
    def restrictive(self) -> bool:
        """Whether some applied layer has an allow list that restricts (no `*`)."""
        return any(p.policy is not None and p.policy.restrictive for p in self._a.plans)

    # -- call rules: built on first use ------------------------------------------------------

    @property
    def call_layers(self) -> tuple[LayerCallRules, ...]:
        """Every applied layer with call rules for an allowed tool, in layer order (the
        inheritance layer holds the parent's), each labelled as in the trail."""
        found = self._calls
        if found is None:
            parent = self._ctx.parent
            inherited = parent.calls if parent is not None else ()
            if not self._policy.has_call_rules and not inherited:
                found = ()
            else:
                from .calls import call_layers

                found = call_layers(
                    self._a.plans, frozenset(self.allowed), self.inventory, inherited
                )
            self._calls = found
        return found

    def has_call_rules(self, tool: str) -> bool:
        """Whether some layer has call rules for `tool`, or for a tool its calls are also
        decided as (a shell tool's read and write tools, a catalog relation's tool), or one of
        those is not in the run: when False, `decide_call` allows every call of the tool
        without looking at it."""
        layers = self.call_layers
        if any(tool in layer.tools for layer in layers):
            return True
        env = self.call_environment()
        related = tuple(r.acts_as for r in env.relations.get(tool, ()))
        if env.spec(tool).kind.value == "shell":
            related += tuple(t for t in (env.read_tool, env.write_tool) if t is not None)
        for access in related:
            if access is not None and (
                not env.has(access) or any(access in layer.tools for layer in layers)
            ):
                return True
        return False

    def call_environment(self) -> CallEnvironment:
        """What decisions need besides the rules: argument kinds, the run's workspace and home
        (from its context), the tools it has. Built once per resolution."""
        env = self._call_env
        if env is None:
            from ..callrules.shell import DEFAULT_LIMITS, ShellLimits
            from ..callrules.subject import environment_for
            from ..callrules.values import Roots

            ctx = self._ctx
            commands = self._policy.commands
            env = environment_for(
                self._a.catalog,
                Roots(ctx.workspace, ctx.home),
                frozenset(self.allowed),
                DEFAULT_LIMITS if commands is None else ShellLimits(commands=commands),
            )
            self._call_env = env
        return env

    def decide_call(self, tool: str, args: Mapping[str, Any]) -> CallDecision:
        """The run's decision for one call: allow, ask or deny, with the layer, entry and
        file:line:col (`Verdict.source`) that decided and every layer's verdict."""
        env = self._call_env
        if env is None:
            env = self.call_environment()
        layers = self._calls
        if layers is None:
            layers = self.call_layers
        return _core_decide()(layers, tool, args, env)

    # -- the trail: built on first use ------------------------------------------------------

    @property
    def removed(self) -> tuple[RemovedTool, ...]:
        return self._build_trail()[0]

    @property
    def layers(self) -> tuple[LayerTrace, ...]:
        return self._build_trail()[1]

    def removal(self, tool: str) -> RemovedTool | None:
        return self._build_trail()[2].get(tool)

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        if self._warnings is None:
            a = self._a
            applied = [p for p in a.plans if p.policy is not None]
            found = [
                *self.inventory.conflicts,
                *a.notes,
                *a.shape.notes,
                *unknown_entry_warnings(applied, self.inventory, a.catalog),
                *unknown_context_values(self._policy, self.context),
            ]
            self._warnings = tuple(dict.fromkeys(found))
        return self._warnings

    def _build_trail(
        self,
    ) -> tuple[tuple[RemovedTool, ...], tuple[LayerTrace, ...], dict[str, RemovedTool]]:
        if self._trail is not None:
            return self._trail
        a = self._a
        cat = a.catalog
        tools = self.inventory.tools
        applied = [p for p in a.plans if p.policy is not None]
        eff = self.context
        owner, optional, provider = a.construction
        removed: list[RemovedTool] = []
        for pos in iter_bits(owner | optional | provider):
            why = construction_record(tools[pos], eff, cat, applied)
            assert why is not None
            removed.append(why)
        alive = a.index.full & ~(owner | optional | provider)
        traces: list[LayerTrace] = []
        for plan, (denied, missing) in zip(a.plans, a.verdicts, strict=True):
            name = spec(plan.stage).name
            lp = plan.policy
            if lp is None:
                traces.append(
                    LayerTrace(
                        int(plan.stage),
                        name,
                        plan.label,
                        False,
                        plan.skip_reason,
                        (),
                        None,
                        False,
                        plan.detail,
                    )
                )
                continue
            gone = (denied | missing) & alive
            names: list[str] = []
            for pos in iter_bits(gone):
                tool = tools[pos]
                verdict = decide(tool.name, tool.plugin_id, lp, cat)
                assert verdict is not None, (tool, plan.stage)
                removed.append(record(tool.name, plan, lp, verdict[0], verdict[1]))
                names.append(tool.name)
            alive &= ~gone
            traces.append(
                LayerTrace(
                    int(plan.stage),
                    name,
                    plan.label,
                    True,
                    None,
                    tuple(names),
                    lp.scope,
                    lp.restrictive,
                    plan.detail,
                )
            )
        assert alive == a.alive
        trail = (tuple(removed), tuple(traces), {r.tool: r for r in removed})
        self._trail = trail
        return trail

    def emptied(self) -> Emptied | None:
        """The layer and list that removed this run's last tools (None while tools remain).

        Read from the verdict masks (validate asks this of thousands of contexts): the layer
        that removed the last survivors emptied the run; when its allow list left out any of
        them it is an allow-list emptying, named with every allow list that narrowed the run
        before (any of them could be widened), else its deny did it, named by the deny entry
        that matched the first survivor (`deny: ["*"]` for a banned sender)."""
        a = self._a
        if a.alive or not a.index.full:
            return None
        owner, optional, provider = a.construction
        alive = a.index.full & ~(owner | optional | provider)
        narrowing: list[LayerPlan] = []
        for plan, (denied, missing) in zip(a.plans, a.verdicts, strict=True):
            lp = plan.policy
            if lp is None or not alive:
                continue
            by_allow = missing & ~denied & alive
            if by_allow:
                narrowing.append(plan)
            if alive & ~(denied | missing):
                alive &= ~(denied | missing)
                continue
            if by_allow:
                allow = lp.allow
                return Emptied(
                    plan,
                    "allow",
                    tuple(p.label for p in narrowing),
                    allow.source if allow is not None else None,
                    allow.key if allow is not None else lp.scope,
                    narrowed=tuple(narrowing),
                )
            tool = self.inventory.tools[(alive & -alive).bit_length() - 1]
            verdict = decide(tool.name, tool.plugin_id, lp, a.catalog)
            hit = verdict[1] if verdict is not None else None
            entry = hit.entry if hit is not None else None
            return Emptied(
                plan,
                "deny",
                (removal_label(plan, "deny", entry),),
                entry.source if entry is not None else None,
                entry.key if entry is not None else lp.scope,
                entry.raw if entry is not None else None,
                tuple(narrowing),
            )
        return None

    def emptied_by(self) -> list[str]:
        """Labels of the allow lists that left this run with no tools (the run must stop
        before the model is asked, semantics 8); empty while tools remain, and when a deny
        removed the last ones (a banned sender's `deny: ["*"]` is not an allowlist mistake)."""
        found = self.emptied()
        return list(found.labels) if found is not None and found.kind == "allow" else []

    def capture(self) -> Capture:
        """What a child run (or a cron job this run creates) inherits (semantics 7.8).

        Always this run's allowed tools, as a cap of literal names (semantics 7.10), plus the
        deny it inherited itself. The invariant "a child's tools are always a subset of its
        parent's" wins over "an unrestricted parent does not cap its child": a parent narrowed
        only by deny rules used to hand down, as deny, what it lost from its own inventory, so a
        tool registered after it resolved (an MCP listing refreshed mid-turn) reached the child.
        """
        return Capture(self.allowed, self.inherited_deny, calls=self.call_layers)

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "context": self.context.to_json(),
            "allowed": list(self.allowed),
            "removed": [r.to_json() for r in self.removed],
            "layers": [layer.to_json() for layer in self.layers],
            "warnings": [{"code": w.code, "message": w.message} for w in self.warnings],
        }
        layers = self.call_layers
        if layers:
            from .calls import rules_json

            out["callRules"] = rules_json(layers, self.allowed)
        return out

    def __repr__(self) -> str:
        return f"Resolution(allowed={self.allowed!r})"


_decide: Callable[..., CallDecision] | None = None


def _core_decide() -> Callable[..., CallDecision]:
    """The call-rule core's `decide_call`, imported once, on the first call decided (an
    import statement per call would cost more than deciding a call without rules)."""
    global _decide
    if _decide is None:
        from ..callrules.decide import decide_call

        _decide = decide_call
    return _decide


class NoCallableToolsError(Exception):
    """Explicit allow lists left the run with no tools; the run must stop before the model."""

    def __init__(self, resolution: Resolution, labels: Sequence[str]):
        self.resolution = resolution
        self.labels = tuple(labels)
        super().__init__(
            "No callable tools remain after resolving explicit tool allowlist "
            f"({'; '.join(self.labels)}); no registered tools matched."
        )


def record(
    tool: str, plan: LayerPlan, lp: LayerPolicy, kind: RuleKind, hit: Hit | None
) -> RemovedTool:
    if hit is None:
        allow = lp.allow
        return RemovedTool(
            tool,
            int(plan.stage),
            plan.label,
            kind,
            None,
            None,
            allow.source if allow else None,
            allow.key if allow else lp.scope,
        )
    entry = hit.entry
    return RemovedTool(
        tool,
        int(plan.stage),
        removal_label(plan, kind, entry),
        kind,
        entry.text,
        hit.expanded_from,
        entry.source,
        entry.key,
        entry.raw,
        entry.origin,
    )


def removal_label(plan: LayerPlan, kind: RuleKind, entry: Entry | None) -> str:
    """What a removal is labelled with: a deny names the list its entry is written in
    (`tools.toolsBySender["id:42"].deny`, `agents.entries.coder.tools.deny`, or the catalog's
    `subagent deny`), never the layer's allow label; an allow-list removal keeps the layer's
    label (`tools.profile (coding)`)."""
    if kind == "deny" and entry is not None:
        return list_path(entry.key)
    return plan.label


def construction_record(
    tool: Tool, eff: EffectiveContext, cat: Catalog, applied: list[LayerPlan]
) -> RemovedTool | None:
    # By name, whoever provides it: a plugin tool called "gateway" is as dangerous as the core one.
    if tool.name in cat.owner_only and not eff.is_owner:
        return RemovedTool(
            tool.name,
            int(Layer.CONSTRUCTION),
            "owner-only tools",
            "owner-only",
            None,
            None,
            None,
            "catalog owner_only",
        )
    if tool.optional and tool.plugin_id is not None:
        named = any(
            p.policy is not None
            and p.policy.allow is not None
            and p.policy.allow.names_exactly(tool.name, tool.plugin_id)
            for p in applied
        )
        if not named:
            return RemovedTool(
                tool.name,
                int(Layer.CONSTRUCTION),
                "optional plugin tools",
                "optional-plugin",
                None,
                None,
                None,
                "an allow list",
            )
    row = cat.by_id.get(tool.name) if tool.plugin_id is None else None
    if (
        row is not None
        and row.providers is not None
        and (eff.provider is None or eff.provider not in row.providers)
    ):
        # With no provider in the context a provider-gated tool is removed: fail closed.
        why = "no provider in context" if eff.provider is None else f"provider {eff.provider}"
        return RemovedTool(
            tool.name,
            int(Layer.CONSTRUCTION),
            "catalog constraints",
            "catalog",
            None,
            None,
            None,
            f"catalog tool {tool.name} (providers: {', '.join(sorted(row.providers))}; {why})",
        )
    return None
