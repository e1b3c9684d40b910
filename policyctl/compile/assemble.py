"""Assemble: the layer policies that combine several scopes, built once at compile time.

Some layers do not apply one scope as written: the profile layer is a built-in profile plus
the alsoAllow of another scope, the provider profile picks its profile and alsoAllow from two
byProvider maps, the sandbox falls back field by field (agent -> global -> catalog default),
the subagent envelope joins catalog deny lists with configured ones. Each such combination
depends only on the document and the catalog, so it is assembled here, for every agent scope
and every provider key the document names, and a resolve only looks it up.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from ..catalog.model import Catalog
from ..diagnostics import Source
from ..names import normalize
from .compiled import (
    UNMATCHED,
    ProviderPlans,
    ProviderScope,
    SandboxLists,
    ScopeLayers,
    ToolsScope,
)
from .entries import Entry, EntryList, build_list
from .layers import Layer, LayerPlan, LayerPolicy, applied, skipped

if TYPE_CHECKING:
    from .calls import CallCompiler, ScopeCalls


def catalog_entries(names: tuple[str, ...] | list[str], catalog: Catalog, key: str) -> list[Entry]:
    out = []
    for raw in names:
        norm = normalize(raw, catalog.aliases)
        if norm:
            out.append(Entry(norm, raw, key, None, "catalog"))
    return out


class Assembler:
    """Builds `ScopeLayers`, sharing every combination that several scopes have in common."""

    def __init__(
        self, catalog: Catalog, global_tools: ToolsScope, calls: CallCompiler | None = None
    ) -> None:
        self.catalog = catalog
        self.g = global_tools
        self.calls = calls
        self.bases: dict[str, EntryList] = {}
        self.shared: dict[tuple[object, ...], LayerPolicy] = {}
        #: one plan per (layer, policy) and one ProviderPlans per global-only match: 10,000
        #: agents that share a sandbox or a provider entry share their plans too
        self.plans: dict[tuple[Layer, int], tuple[LayerPolicy, LayerPlan]] = {}
        self.global_only: dict[tuple[str, ...], ProviderPlans] = {}
        self.global_pairs: Mapping[str, ProviderPlans] | None = None

    def applied(self, layer: Layer, policy: LayerPolicy) -> LayerPlan:
        found = self.plans.get((layer, id(policy)))
        if found is None or found[0] is not policy:
            found = (policy, applied(layer, policy))
            self.plans[(layer, id(policy))] = found
        return found[1]

    def build(self, scope: ToolsScope | None) -> ScopeLayers:
        g = self.g
        tables = tuple(t for t in (scope.senders if scope else None, g.senders) if t is not None)
        own = scope is not None and bool(scope.by_provider)
        providers = self.global_pairs if not own else None
        if providers is None:
            keys = dict.fromkeys([*(scope.by_provider if scope else ()), *g.by_provider])
            pairs: dict[str, ProviderPlans] = {}
            for key in keys:
                provider = key.partition("/")[0]
                candidates = [key, provider] if key != provider else [provider]
                pairs[key] = self.provider_plans(scope, candidates)
                if provider not in pairs:
                    pairs[provider] = self.provider_plans(scope, [provider])
            providers = MappingProxyType(pairs)
            if not own:
                self.global_pairs = providers  # every scope without byProvider shares it
        agent_plan = None
        if scope is not None:
            agent_plan = (
                applied(Layer.AGENT, scope.policy)
                if scope.policy is not None
                else skipped(Layer.AGENT, "agent has no tools policy")
            )
        own_sandbox = scope if scope is not None and scope.sandbox is not None else None
        configured = scope.subagents if scope is not None and scope.subagents else g.subagents
        return ScopeLayers(
            self.profile(scope),
            agent_plan,
            providers,
            UNMATCHED,
            tables,
            self.applied(Layer.SANDBOX, self.sandbox(own_sandbox)),
            self.applied(Layer.SUBAGENT, self.subagent(configured, leaf=False)),
            self.applied(Layer.SUBAGENT, self.subagent(configured, leaf=True)),
        )

    # -- layer 1 ------------------------------------------------------------------------------

    def profile_base(self, name: str) -> EntryList:
        """A built-in profile's own entries, expanded once and shared by every scope using it."""
        base = self.bases.get(name)
        if base is None:
            cat = self.catalog
            entries = [Entry(e, e, f"profile {name}", None, "profile") for e in cat.profiles[name]]
            base = build_list("", None, entries, cat.groups, cat.covers)
            self.bases[name] = base
        return base

    def profile(self, scope: ToolsScope | None) -> LayerPlan:
        g = self.g
        owner = scope if scope is not None and scope.profile else g
        if owner.profile is None:
            return skipped(Layer.PROFILE, "no profile configured")
        also_owner = scope if scope is not None and scope.also_allow is not None else g
        key = ("profile", owner.name, also_owner.name)
        built = self.shared.get(key)
        if built is None:
            extra = also_owner.also_allow.entries if also_owner.also_allow else ()
            allow = self.with_base(
                owner.profile, f"{owner.name}.profile", owner.profile_source, extra
            )
            built = LayerPolicy(f"tools.profile ({owner.profile})", f"{owner.name}.profile", allow)
            self.shared[key] = built
        return self.applied(Layer.PROFILE, built)

    def with_base(
        self, profile: str, key: str, source: Source | None, extra: tuple[Entry, ...] | list[Entry]
    ) -> EntryList:
        cat = self.catalog
        return build_list(
            key, source, extra, cat.groups, cat.covers, base=self.profile_base(profile)
        )

    # -- layers 2, 4, 6 -----------------------------------------------------------------------

    def provider_plans(self, scope: ToolsScope | None, candidates: list[str]) -> ProviderPlans:
        if not candidates:
            return UNMATCHED
        agent_match = _first(scope.by_provider, candidates) if scope else None
        if agent_match is None:
            shared = self.global_only.get(tuple(candidates))
            if shared is not None:
                return shared
        global_match = _first(self.g.by_provider, candidates)
        plans = ProviderPlans(
            self.provider_profile(agent_match, global_match),
            self.applied(Layer.GLOBAL_BY_PROVIDER, global_match.policy)
            if global_match is not None and global_match.policy is not None
            else skipped(Layer.GLOBAL_BY_PROVIDER, "no matching tools.byProvider entry"),
            self.applied(Layer.AGENT_BY_PROVIDER, agent_match.policy)
            if agent_match is not None and agent_match.policy is not None
            else skipped(Layer.AGENT_BY_PROVIDER, "no matching agent byProvider entry"),
        )
        if agent_match is None:
            self.global_only[tuple(candidates)] = plans
        return plans

    def provider_profile(
        self, agent_match: ProviderScope | None, global_match: ProviderScope | None
    ) -> LayerPlan:
        source = agent_match if agent_match is not None and agent_match.profile else global_match
        if source is None or source.profile is None:
            return skipped(Layer.PROVIDER_PROFILE, "no provider profile for this provider")
        also = (
            agent_match.also_allow
            if agent_match is not None and agent_match.also_allow is not None
            else global_match.also_allow
            if global_match is not None
            else None
        )
        key = ("provider-profile", source.key, also.key if also else None)
        built = self.shared.get(key)
        if built is None:
            where = f"{source.key}.profile"
            allow = self.with_base(
                source.profile, where, source.profile_source, also.entries if also else ()
            )
            built = LayerPolicy(f"tools.byProvider.profile ({source.profile})", where, allow)
            self.shared[key] = built
        return self.applied(Layer.PROVIDER_PROFILE, built)

    # -- layer 9 ------------------------------------------------------------------------------

    def sandbox(self, scope: ToolsScope | None) -> LayerPolicy:
        key = ("sandbox", scope.name if scope is not None else None)
        built = self.shared.get(key)
        if built is None:
            built = self._sandbox_policy(scope)
            self.shared[key] = built
        return built

    def _sandbox_policy(self, scope: ToolsScope | None) -> LayerPolicy:
        """Semantics 7.6: per-field fallback agent -> global -> catalog default."""
        cat = self.catalog
        lists = [s.sandbox for s in (scope, self.g) if s is not None and s.sandbox is not None]

        def pick(field: str) -> tuple[tuple[Entry, ...] | None, str, Source | None]:
            for lst in lists:
                value = getattr(lst, field)
                if value is not None:
                    return value.entries, value.key, value.source
            return None, "", None

        allow_cfg, allow_key, allow_src = pick("allow")
        also_cfg, also_key, also_src = pick("also_allow")
        deny_cfg, deny_key, deny_src = pick("deny")
        also = list(also_cfg or ())
        owner = scope.name if scope is not None else "tools"
        if not allow_cfg:
            # The catalog default applies: the edit that widens it is alsoAllow (setting `allow`
            # would replace the default list, not add to it).
            allow_key = also_key or f"{owner}.sandbox.tools.alsoAllow"
            allow_src = also_src
        allow: list[Entry] | None
        if allow_cfg is not None and not allow_cfg:
            allow = None  # configured [] -> allow everything (alsoAllow ignored)
        elif allow_cfg:
            allow = [*allow_cfg, *also]
        else:
            allow = [*catalog_entries(cat.sandbox_allow, cat, "sandbox default allow"), *also]
        explicit = build_list("", None, [*(allow_cfg or ()), *also], cat.groups, cat.covers)
        if deny_cfg is not None:
            deny = list(deny_cfg)
        else:
            deny = [
                e
                for e in catalog_entries(cat.sandbox_deny, cat, "sandbox default deny")
                if explicit.match(e.text) is None
            ]
        allow_list = (
            build_list(allow_key, allow_src, allow, cat.groups, cat.covers) if allow else None
        )
        deny_list = build_list(
            deny_key or "tools.sandbox.tools.deny", deny_src, deny, cat.groups, cat.covers
        )
        image = cat.image_tool
        if (
            allow_list is not None
            and allow_list.restrictive
            and image
            and image not in allow_list.names
            and image not in deny_list.names
        ):
            allow_list = build_list(
                allow_key,
                allow_src,
                [*allow_list.entries, *catalog_entries([image], cat, "sandbox image tool")],
                cat.groups,
                cat.covers,
            )
        return LayerPolicy(
            "sandbox tools.allow",
            f"{owner}.sandbox.tools",
            allow_list,
            deny_list,
            calls=self._sandbox_calls(lists),
        )

    def _sandbox_calls(self, lists: list[SandboxLists]) -> ScopeCalls | None:
        """The sandbox's call rules, per field like its names: each list's rules from the
        first block (agent, then global) whose list has call rules, callDefault from the first
        that sets it."""
        written = [s.calls for s in lists if s.calls is not None]
        if self.calls is None or not written:
            return None
        from .calls import CallLists

        allow_from = next((c for c in written if c.allow is not None), None)
        default_from = next((c for c in written if c.call_default is not None), None)
        picked = CallLists(
            deny=next((c.deny for c in written if c.deny is not None), None),
            ask=next((c.ask for c in written if c.ask is not None), None),
            allow=allow_from.allow if allow_from else None,
            plain_ask=next((c.plain_ask for c in written if c.plain_ask is not None), None),
            plain_allow=allow_from.plain_allow if allow_from else None,
            call_default=default_from.call_default if default_from else None,
            call_default_source=default_from.call_default_source if default_from else None,
        )
        return self.calls.scope_calls(picked)

    # -- layer 10 -----------------------------------------------------------------------------

    def subagent(self, configured: LayerPolicy | None, leaf: bool) -> LayerPolicy:
        key = ("subagent", configured.scope if configured is not None else None, leaf)
        built = self.shared.get(key)
        if built is None:
            cat = self.catalog
            names = [*cat.subagent_deny_always, *(cat.subagent_deny_leaf if leaf else ())]
            what = f"subagent {'leaf ' if leaf else ''}deny (catalog)"
            base = catalog_entries(names, cat, what)
            extra = configured.deny.entries if configured is not None and configured.deny else ()
            deny = build_list(
                "tools.subagents.tools.deny", None, [*base, *extra], cat.groups, cat.covers
            )
            allow = configured.allow if configured is not None else None
            calls = configured.calls if configured is not None else None
            built = LayerPolicy(
                "subagent tools.allow", "tools.subagents.tools", allow, deny, calls=calls
            )
            self.shared[key] = built
        return built


def _first(table: Mapping[str, ProviderScope], keys: list[str]) -> ProviderScope | None:
    for key in keys:
        found = table.get(key)
        if found is not None:
            return found
    return None
