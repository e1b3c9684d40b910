"""Which policy each of the eleven layers applies to a run (semantics 6 and 7), read straight
from the merged document's plain data. None means the layer is skipped."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from policyctl import Capture, Sender
from policyctl.catalog.model import Catalog

from .facts import Facts
from .matching import Named, Policy, any_matches, make_policy, normal

Scope = dict[str, Any]


def scope_policy(catalog: Catalog, scope: Scope | None) -> Policy | None:
    """Section 6: allow as is; alsoAllow alone is `["*", ...alsoAllow]`; deny passes."""
    if not scope:
        return None
    allow, also, deny = scope.get("allow"), scope.get("alsoAllow"), scope.get("deny")
    if allow is None and also:
        allow = ["*", *also]
    if allow is None and deny is None:
        return None
    return make_policy(catalog, allow, deny)


def _agent_tools(doc: dict[str, Any], agent: str | None) -> Scope | None:
    """The agent's `tools`; `agents.defaults.tools` for an agent with no entry."""
    agents = doc.get("agents") or {}
    entries = agents.get("entries") or {}
    if agent is not None and agent in entries:
        return (entries[agent] or {}).get("tools")
    return (agents.get("defaults") or {}).get("tools")


def _provider_match(catalog: Catalog, table: dict[str, Scope] | None, facts: Facts) -> Scope | None:
    """Section 7.2: `<provider>/<model>` first, then `<provider>`; no merging."""
    if not table or not facts.provider:
        return None

    def canonical(key: str) -> str:
        key = key.strip().lower()
        head, sep, tail = key.partition("/")
        return catalog.provider_aliases.get(head, head) + sep + tail

    keyed = {canonical(k): v for k, v in table.items()}
    provider = canonical(facts.provider)
    candidates = [provider]
    if facts.model:
        candidates.insert(0, f"{provider}/{facts.model.strip().lower()}")
    for candidate in candidates:
        if candidate in keyed:
            return keyed[candidate]
    return None


def sender_match(
    table: dict[str, Scope] | None, sender: Sender, channel: str | None
) -> Scope | None:
    """Section 7.5: channel-scoped id, id, e164, username, name, then `*`; first hit wins."""
    if table is None:
        return None
    keyed: dict[str, Scope] = {}
    for raw, scope in table.items():
        key = raw.strip()
        kind, sep, value = key.partition(":")
        if key == "*":
            keyed["*"] = scope
        elif sep and kind == "channel":
            ch, _, ident = value.partition(":")
            keyed[f"channel:{ch.strip().lower()}:{ident.strip().lower()}"] = scope
        elif sep and kind in ("id", "e164", "username", "name"):
            value = value.strip().lower()
            keyed[f"{kind}:{value.lstrip('@') if kind == 'username' else value}"] = scope
        else:  # an untyped legacy key is a sender id
            keyed.setdefault(f"id:{key.lower()}", scope)

    def clean(value: str | None) -> str | None:
        return value.strip().lower() if value and value.strip() else None

    ident, e164, name = clean(sender.id), clean(sender.e164), clean(sender.name)
    username = clean(sender.username)
    username = username.lstrip("@") if username else None
    candidates = []
    if ident and channel:
        candidates.append(f"channel:{channel.strip().lower()}:{ident}")
    candidates += [
        f"{kind}:{value}"
        for kind, value in (("id", ident), ("e164", e164), ("username", username), ("name", name))
        if value
    ]
    candidates.append("*")
    for candidate in candidates:
        if candidate in keyed:
            return keyed[candidate]
    return None


def _group_candidates(group: str) -> list[str]:
    out = [group]
    if ":sender:" in group:
        out.append(group.split(":sender:")[0])
    if ":topic:" in out[-1]:
        out.append(out[-1].split(":topic:")[0])
    return out


def group_policy(catalog: Catalog, doc: dict[str, Any], facts: Facts) -> Policy | None:
    """Section 7.4, including the fail-closed cron run on a deleted account."""
    channels = doc.get("channels") or {}
    channel = (channels.get(facts.channel) or {}) if facts.channel else {}
    accounts = channel.get("accounts") or {}
    # A deleted account must not fall back to looser groups: a cron run naming an account
    # that has no configuration (in its channel, or with no channel at all) fails closed.
    if facts.channel is None:  # no channel named: the account of any channel
        accounts = {a: 1 for ch in channels.values() for a in (ch or {}).get("accounts") or {}}
    if facts.trigger == "cron" and facts.account is not None and facts.account not in accounts:
        return make_policy(catalog, None, ["*"])
    accounts = channel.get("accounts") or {}
    if facts.channel is None:
        return None
    if facts.group is None:
        return None
    account = accounts.get(facts.account) if facts.account is not None else None
    groups = (account or {}).get("groups")
    if groups is None:
        groups = channel.get("groups") or {}
    picked = next((groups[c] for c in _group_candidates(facts.group) if c in groups), None)
    for group in (picked, groups.get("*")):
        if group is None:
            continue
        rule = sender_match(group.get("toolsBySender"), _sender(facts), facts.channel)
        if rule is not None:
            return scope_policy(catalog, rule) or make_policy(catalog, None, [])
        # `tools: {}` is no policy (section 6), so it is no hit either: the `*` group decides
        tools = scope_policy(catalog, group.get("tools"))
        if tools is not None:
            return tools
    return None


def _sender(facts: Facts) -> Sender:
    return Sender() if facts.trigger == "cron" else facts.sender


def _profile(catalog: Catalog, profile: str | None, also: list[str] | None) -> Policy | None:
    if profile is None:
        return None
    return make_policy(catalog, [*catalog.profiles[profile], *(also or [])], None)


def _sandbox(catalog: Catalog, agent_tools: Scope | None, global_tools: Scope) -> Policy:
    """Section 7.6: each field from the agent, else the global, else the catalog default."""
    own = ((agent_tools or {}).get("sandbox") or {}).get("tools") or {}
    base = (global_tools.get("sandbox") or {}).get("tools") or {}

    def field(name: str) -> list[str] | None:
        for scope in (own, base):
            if isinstance(scope.get(name), list):
                return list(scope[name])
        return None

    allow, also, deny = field("allow"), field("alsoAllow"), field("deny")
    if allow == []:
        allow_list: list[str] = []
    else:
        allow_list = [*(allow or catalog.sandbox_allow), *(also or [])]
    if deny is None:
        explicit = make_policy(catalog, [*(allow or []), *(also or [])], None).allow or ()
        deny = [
            d
            for d in catalog.sandbox_deny
            if not any_matches(catalog, explicit, Named(normal(catalog, d), None))
        ]
    if allow_list and catalog.image_tool:
        allow_list.append(catalog.image_tool)  # only matters when neither list names it
    return make_policy(catalog, allow_list, deny)


def _subagent(catalog: Catalog, facts: Facts, doc: dict[str, Any], global_tools: Scope) -> Policy:
    defaults = (doc.get("agents") or {}).get("defaults") or {}
    max_depth = (defaults.get("subagents") or {}).get("maxSpawnDepth") or 1
    deny = list(catalog.subagent_deny_always)
    if facts.depth >= max_depth:  # a leaf
        deny += catalog.subagent_deny_leaf
    configured = scope_policy(catalog, (global_tools.get("subagents") or {}).get("tools"))
    extra = make_policy(catalog, None, deny)
    return Policy(
        configured.allow if configured else None,
        extra.deny + (configured.deny if configured else ()),
    )


def _inherited(catalog: Catalog, parent: Capture | None, trigger: str) -> Policy | None:
    allow: set[str] | None = None
    deny: set[str] = set()
    if parent is not None:
        allow = None if parent.allow is None else set(parent.allow)
        deny = set(parent.deny)
    if trigger == "memory":
        keep = {normal(catalog, t) for t in catalog.memory_flush_tools}
        allow = keep if allow is None else allow & keep
    if parent is None and trigger != "memory":
        return None
    return Policy(
        None if allow is None else tuple(sorted(allow)), tuple(sorted(deny)), literal=True
    )


def layer_policies(
    catalog: Catalog,
    doc: dict[str, Any],
    facts: Facts,
    parent: Capture | None,
    quirks: frozenset[str] = frozenset(),
) -> list[Policy | None]:
    """The eleven layers in order (index 0 is layer 1)."""
    global_tools: Scope = doc.get("tools") or {}
    agent_tools = _agent_tools(doc, facts.agent)
    agent: Scope = agent_tools or {}
    global_match = _provider_match(catalog, global_tools.get("byProvider"), facts)
    agent_match = _provider_match(catalog, agent.get("byProvider"), facts)

    also = agent.get("alsoAllow")
    if not isinstance(also, list):
        also = global_tools.get("alsoAllow")
    profile = _profile(catalog, agent.get("profile") or global_tools.get("profile"), also)

    pm_profile = (agent_match or {}).get("profile") or (global_match or {}).get("profile")
    pm_also = (agent_match or {}).get("alsoAllow")
    if not isinstance(pm_also, list):
        pm_also = (global_match or {}).get("alsoAllow")
    provider_profile = _profile(catalog, pm_profile, pm_also)

    own_senders = sender_match(agent.get("toolsBySender"), _sender(facts), facts.channel)
    if own_senders is None:
        chosen = sender_match(global_tools.get("toolsBySender"), _sender(facts), facts.channel)
    else:
        chosen = own_senders
    sender = None
    if chosen is not None:
        sender = scope_policy(catalog, chosen) or make_policy(catalog, None, [])

    layers = [
        profile,
        provider_profile,
        scope_policy(catalog, global_tools),
        scope_policy(catalog, global_match),
        scope_policy(catalog, agent_tools),
        scope_policy(catalog, agent_match),
        group_policy(catalog, doc, facts),
        sender,
        _sandbox(catalog, agent_tools, global_tools) if facts.sandboxed else None,
        _subagent(catalog, facts, doc, global_tools) if facts.is_subagent else None,
        _inherited(catalog, parent, facts.trigger),
    ]
    # an agent with no entry is governed by `agents.defaults.tools`, and labelled so
    entries = (doc.get("agents") or {}).get("entries") or {}
    owner = facts.agent if facts.agent in entries else "defaults"
    labels = [
        f"tools.profile ({agent.get('profile') or global_tools.get('profile')})",
        f"tools.byProvider.profile ({pm_profile})",
        "tools.allow",
        "tools.byProvider.allow",
        f"agents.{owner}.tools.allow",
        f"agents.{owner}.tools.byProvider.allow",
        "group tools.allow",
        "tools.toolsBySender",
        "sandbox tools.allow",
        "subagent tools.allow",
        "inherited tools",
    ]
    return [
        None if p is None else replace(p, label=p.label or lb)
        for p, lb in zip(layers, labels, strict=True)
    ]
