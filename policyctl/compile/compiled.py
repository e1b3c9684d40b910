"""The compiled policy: frozen values a resolve reads and never writes.

Every mapping is read-only (`MappingProxyType`), every sequence a tuple; nothing here caches.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..catalog.commands import CommandCatalog
from ..catalog.inventory import Inventory, Tool
from ..catalog.model import Catalog
from ..diagnostics import Diagnostic, Source
from .entries import EntryList
from .layers import Layer, LayerPlan, LayerPolicy, skipped

if TYPE_CHECKING:
    from .calls import CallLists


@dataclass(frozen=True, slots=True)
class SandboxLists:
    """A scope's `sandbox.tools` fields, kept apart: the sandbox layer falls back per field."""

    allow: EntryList | None = None
    also_allow: EntryList | None = None
    deny: EntryList | None = None
    #: the block's call rules, per list: the sandbox layer falls back per field for them too
    calls: CallLists | None = None


@dataclass(frozen=True, slots=True)
class ProviderScope:
    key: str
    profile: str | None
    profile_source: Source | None
    also_allow: EntryList | None
    policy: LayerPolicy | None


@dataclass(frozen=True, slots=True)
class SenderTable:
    """Sender keys of one `toolsBySender` map, normalised (`id:42`, `username:ada`, ...).

    A matched key with an empty policy maps to None: a match that restricts nothing, yet
    still wins over a less specific map.
    """

    label: str
    policies: Mapping[str, LayerPolicy | None]


@dataclass(frozen=True, slots=True)
class ProviderPlans:
    """Layers 2, 4 and 6 for one provider (and model) of one agent scope."""

    provider_profile: LayerPlan
    global_by_provider: LayerPlan
    agent_by_provider: LayerPlan


@dataclass(frozen=True, slots=True)
class ScopeLayers:
    """Everything one agent scope (an agent's `tools`, or `agents.defaults.tools` for runs
    without an agent entry) decides, whoever the sender and whatever the session."""

    profile: LayerPlan
    #: None: the agent layer's skip reason names the run's agent, so select writes it
    agent: LayerPlan | None
    #: keyed by `provider/model` or `provider`, for every key either byProvider map names
    providers: Mapping[str, ProviderPlans]
    #: a provider that no byProvider key names
    unmatched: ProviderPlans
    sender_tables: tuple[SenderTable, ...]
    sandbox: LayerPlan
    subagent: LayerPlan
    subagent_leaf: LayerPlan


UNMATCHED = ProviderPlans(
    skipped(Layer.PROVIDER_PROFILE, "no provider profile for this provider"),
    skipped(Layer.GLOBAL_BY_PROVIDER, "no matching tools.byProvider entry"),
    skipped(Layer.AGENT_BY_PROVIDER, "no matching agent byProvider entry"),
)

NO_PROVIDER = ProviderPlans(
    skipped(Layer.PROVIDER_PROFILE, "no provider in context"),
    skipped(Layer.GLOBAL_BY_PROVIDER, "no provider in context"),
    skipped(Layer.AGENT_BY_PROVIDER, "no provider in context"),
)


@dataclass(frozen=True, slots=True)
class ToolsScope:
    """The global `tools` or one agent's `tools`, compiled."""

    #: the config path of this tools block: `tools`, `agents.entries.coder.tools`, ...
    name: str
    profile: str | None
    profile_source: Source | None
    also_allow: EntryList | None
    policy: LayerPolicy | None
    by_provider: Mapping[str, ProviderScope]
    senders: SenderTable | None
    sandbox: SandboxLists | None
    subagents: LayerPolicy | None


@dataclass(frozen=True, slots=True)
class GroupPolicy:
    tools: LayerPolicy | None
    senders: SenderTable | None


@dataclass(frozen=True, slots=True)
class ChannelPolicy:
    groups: Mapping[str, GroupPolicy] | None
    accounts: Mapping[str, Mapping[str, GroupPolicy] | None]


@dataclass(frozen=True, slots=True)
class AgentPolicy:
    id: str
    tools: ToolsScope | None
    sandbox_mode: str | None


class _Weakly:
    """Lets a slotted frozen dataclass be weakly referenced (`weakref_slot` is 3.11+)."""

    __slots__ = ("__weakref__",)


_NO_PARAMETERS: Mapping[str, Mapping[str, Any]] = MappingProxyType({})


@dataclass(frozen=True, slots=True, eq=False)
class CompiledPolicy(_Weakly):
    """Everything a resolve needs, built once, immutable, shared freely across threads.

    It holds no cache: a `pipeline.engine.Resolver` owns every cache for one policy. Every
    combination of scopes a layer may apply is assembled at compile time (`layers`), so a
    resolve only looks things up.
    """

    catalog: Catalog
    root: str
    files: tuple[str, ...]
    global_tools: ToolsScope
    defaults_tools: ToolsScope | None
    agents: Mapping[str, AgentPolicy]
    channels: Mapping[str, ChannelPolicy]
    default_sandbox_mode: str
    max_spawn_depth: int
    main_key: str
    session_scope: str
    declared_tools: tuple[Tool, ...]
    diagnostics: tuple[Diagnostic, ...]
    #: per agent id with an entry, and None for every other run: the layers that
    #: depend on the agent scope alone (see `assemble.ScopeLayers`)
    layers: Mapping[str | None, ScopeLayers]
    #: the memory-flush trigger's allow list (literal names)
    memory_flush: tuple[str, ...]
    #: the catalog's core tools plus the declared inventory: what a run gets by default
    default_inventory: Inventory
    #: whether any scope has call rules: a run of a policy without them skips call rules
    has_call_rules: bool = False
    #: declared plugin tool -> its parameters schema, where the inventory gives one (validate
    #: checks keyed call rules against it; a bundle does not carry it)
    declared_parameters: Mapping[str, Mapping[str, Any]] = field(
        default_factory=lambda: _NO_PARAMETERS
    )
    #: the command catalog with the policy's `commands` entries (None: the shipped one)
    commands: CommandCatalog | None = None

    def default_tools(self) -> list[Tool]:
        return list(self.default_inventory.tools)


# -- what a policy holds, in every scope (the matrix, the context warnings, call checks) ------


def tools_scopes(policy: CompiledPolicy) -> list[ToolsScope]:
    scopes = [policy.global_tools]
    if policy.defaults_tools is not None:
        scopes.append(policy.defaults_tools)
    scopes.extend(a.tools for a in policy.agents.values() if a.tools is not None)
    return scopes


def provider_keys(policy: CompiledPolicy) -> set[str]:
    """Every `byProvider` key of the policy (`provider` or `provider/model`)."""
    return {key for scope in tools_scopes(policy) for key in scope.by_provider}


def sender_tables(policy: CompiledPolicy) -> list[SenderTable]:
    """Every `toolsBySender` table: of each tools scope, then of each group."""
    tables = [s.senders for s in tools_scopes(policy) if s.senders is not None]
    for channel in policy.channels.values():
        for groups in (channel.groups, *channel.accounts.values()):
            for group in (groups or {}).values():
                if group.senders is not None:
                    tables.append(group.senders)
    return tables


def group_map(
    policy: CompiledPolicy, channel: str, account: str | None
) -> dict[str, GroupPolicy] | None:
    """The groups map a run in this channel and account uses (semantics 7.4)."""
    found = policy.channels.get(channel)
    if found is None:
        return None
    if account is not None and found.accounts.get(account) is not None:
        return dict(found.accounts[account] or {})
    return dict(found.groups) if found.groups is not None else None
