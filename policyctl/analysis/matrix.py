"""The context matrix: one representative run for every class of runs a policy can tell apart.

Dimensions, each the values a policy can distinguish (what the file mentions, plus "none" and
"other"):

- agent: every agent entry, and "no agent" (an agent without an entry resolves like no agent);
- provider: every `byProvider` key (`provider` and `provider/model`), every provider the
  catalog gates a tool on, "another provider" and "no provider";
- place: no channel; every channel the policy configures or a channel-scoped sender key
  names; per configured channel every account, "an unconfigured account" (a scheduled run
  fails closed there) and every group id of the applicable groups map plus "another group";
  for each place the session (main or non-main, a group session is never main) and the
  subagent depth (main, orchestrator, leaf);
- sender: a value or none for each of id, e164, username and name, from the sender keys
  (values every rule treats alike are one value);
- owner or not;
- trigger: a user turn (skill, spawn and gateway runs resolve the same way), cron, the
  memory flush.

A context with a parent capture (layer 11) is not a dimension: the capture only ever narrows
the tools of its cell. `representative` maps any context to its cell; a property test checks
that both resolve to the same tools.

The matrix is a mixed-radix product whose size is computed, never built: cell `i` is decoded
from its index, so the whole product is walked lazily and a sample beyond `max_contexts` is a
deterministic draw of indexes (`random.Random(_SEED).sample`), whatever the product's size.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from ..compile.compiled import group_map, provider_keys, sender_tables
from ..context import RunContext, Sender, group_candidates

if TYPE_CHECKING:  # types only: the matrix reads the compiled policy's indexes, nothing more
    from ..compile.compiled import CompiledPolicy, GroupPolicy
    from ..compile.layers import LayerPolicy
    from ..pipeline.context import EffectiveContext

_SEED = 0x5EED
OTHER = "(other)"
#: contexts `validate`, `test` and `diff` check before sampling (each costs a resolve)
DEFAULT_MAX_CONTEXTS = 10_000
OTHER_PROVIDER = "other-provider"
SENDER_KINDS = ("id", "e164", "username", "name")
TRIGGER_CLASSES = ("user", "cron", "memory")


@dataclass(frozen=True, slots=True)
class MatrixContext:
    """One cell: a run context and a short label such as `agent=coder provider=openai`."""

    label: str
    context: RunContext


@dataclass(frozen=True, slots=True)
class Place:
    """Where a run happens: channel, account, group, whether the session is non-main (a
    group session always is) and the subagent depth (0 for the run itself)."""

    channel: str | None
    account: str | None
    group: str | None
    non_main: bool
    depth: int
    #: the session key of a main-session place standing for another policy's main key
    #: (`diff`: a change of `session.mainKey` or `session.scope` must show), else `main`
    key: str | None = None


@dataclass(frozen=True, slots=True)
class Cell:
    """The coordinates of one matrix cell, one value per dimension."""

    agent: str | None
    provider: tuple[str | None, str | None]
    place: Place
    sender: tuple[str | None, str | None, str | None, str | None]
    owner: bool
    trigger: str


@dataclass(frozen=True, slots=True)
class Matrix:
    """The cells shown (all of them, or a deterministic sample) and the size of the product."""

    contexts: tuple[MatrixContext, ...]
    total: int
    sampled: bool


class Dimensions:
    """The value lists of every dimension of one policy; cell `i` of the product on demand."""

    def __init__(
        self,
        policy: CompiledPolicy,
        agents: Sequence[str | None] | None = None,
        main_keys: Iterable[str] = (),
    ) -> None:
        self.policy = policy
        #: session keys, besides `main`, that name the main session of some policy compared
        #: with this one: each is a session of its own where main and non-main differ
        self.main_keys = sorted({k for k in main_keys if k != "main"})
        all_agents: list[str | None] = [None, *sorted(policy.agents)]
        self.agents = all_agents if agents is None else [a for a in all_agents if a in agents]
        self.providers = _providers(policy)
        self.provider_keys = provider_keys(policy)
        mentioned = {k.partition("/")[0] for k in self.provider_keys}
        #: providers the policy does not mention, by the catalog gates they pass
        self.unmentioned = {
            gates(policy, p): p for p, _ in reversed(self.providers) if p and p not in mentioned
        }
        self.sender_channels = _sender_channels(policy)
        self.other_group = _unused(OTHER, _group_keys(policy))
        self.other_account = _unused(
            OTHER, {a for c in policy.channels.values() for a in c.accounts}
        )
        #: per (channel, account) groups map: group id -> the id standing for its class
        self.group_classes: dict[tuple[str, str | None], dict[str, str]] = {}
        self.places = self._places()
        #: a place and a trigger together: a deleted account only matters to a scheduled run
        self.situations = [
            (place, trigger)
            for place in self.places
            for trigger in TRIGGER_CLASSES
            if place.account != self.other_account or trigger == "cron"
        ]
        #: per sender field, each value a sender key uses -> the value standing for its class
        self.sender_classes = _sender_classes(policy)
        self.sender_values: list[list[str | None]] = [
            [None, *dict.fromkeys(classes.values())] for classes in self.sender_classes
        ]
        self.radix: list[int] = [
            len(self.agents),
            len(self.providers),
            len(self.situations),
            *(len(v) for v in self.sender_values),
            2,
        ]

    @cached_property
    def total(self) -> int:
        size = 1
        for r in self.radix:
            size *= r
        return size

    # -- places -----------------------------------------------------------------------------

    def _depths(self) -> list[int]:
        top = max(self.policy.max_spawn_depth, 1)
        return sorted({1, top})

    def _places(self) -> list[Place]:
        policy = self.policy
        modes = {policy.default_sandbox_mode, *(a.sandbox_mode for a in policy.agents.values())}
        # main and non-main sessions differ only under `non-main` (off: neither is sandboxed,
        # all: both are); a group session is never the main session
        sessions = [False, True] if "non-main" in modes else [False]
        out: list[Place] = []

        def add(channel: str | None, account: str | None, group: str | None) -> None:
            for non_main in [True] if group is not None else sessions:
                out.append(Place(channel, account, group, non_main, 0))
            if group is None and len(sessions) > 1:
                out.extend(Place(channel, account, None, False, 0, k) for k in self.main_keys)
            for depth in self._depths():
                out.append(Place(channel, account, group, True, depth))

        add(None, None, None)
        # a scheduled run that names an account no channel configures, and no channel
        add(None, self.other_account, None)
        configured = policy.channels
        for name in sorted(set(configured) | self.sender_channels):
            add(name, None, None)
            add(name, self.other_account, None)
            channel = configured.get(name)
            if channel is None:
                continue  # only channel-scoped sender keys name it: no group layer
            for gid in self._group_classes(name, None, channel.groups):
                add(name, None, gid)
            add(name, None, self.other_group)
            for account in sorted(channel.accounts):
                groups = channel.accounts[account]
                if groups is None:
                    continue  # an account without groups uses the channel's: same as no account
                add(name, account, None)
                for gid in self._group_classes(name, account, groups):
                    add(name, account, gid)
                add(name, account, self.other_group)
        return list(dict.fromkeys(out))

    def _group_classes(
        self, channel: str, account: str | None, groups: Mapping[str, GroupPolicy] | None
    ) -> list[str]:
        """The group ids of one groups map that stand for the others: ids whose tools and
        sender rules say the same thing are one group (a thousand groups that all deny exec
        are one place). Records id -> its stand-in for `cell_of`."""
        found = groups or {}
        first: dict[object, str] = {}
        classes = {
            gid: first.setdefault(_group_content(found[gid]), gid)
            for gid in sorted(found)
            if gid != "*"
        }
        self.group_classes[(channel, account)] = classes
        return list(first.values())

    # -- cells ------------------------------------------------------------------------------

    def cell_at(self, index: int) -> Cell:
        digits = []
        for r in reversed(self.radix):
            index, digit = divmod(index, r)
            digits.append(digit)
        d = digits[::-1]
        sender = tuple(self.sender_values[k][d[3 + k]] for k in range(4))
        place, trigger = self.situations[d[2]]
        return Cell(
            self.agents[d[0]],
            self.providers[d[1]],
            place,
            (sender[0], sender[1], sender[2], sender[3]),
            bool(d[7]),
            trigger,
        )

    def index_of(self, cell: Cell) -> int:
        """The position of a cell in the product (ValueError when it is not a cell)."""
        digits = [
            self.agents.index(cell.agent),
            self.providers.index(cell.provider),
            self.situations.index((cell.place, cell.trigger)),
            *(self.sender_values[k].index(v) for k, v in enumerate(cell.sender)),
            int(cell.owner),
        ]
        index = 0
        for digit, r in zip(digits, self.radix, strict=True):
            index = index * r + digit
        return index

    def context_at(self, index: int) -> MatrixContext:
        return matrix_context(self.cell_at(index))

    def __iter__(self) -> Iterator[MatrixContext]:
        for i in range(self.total):
            yield self.context_at(i)

    # -- representatives --------------------------------------------------------------------

    def cell_of(self, eff: EffectiveContext) -> Cell:
        """The cell whose context resolves like a run with this effective context."""
        policy = self.policy
        agent = eff.agent if eff.agent in policy.agents else None
        provider: tuple[str | None, str | None] = (None, None)
        if eff.provider is not None:
            if eff.model and f"{eff.provider}/{eff.model}" in self.provider_keys:
                provider = (eff.provider, eff.model)
            elif (eff.provider, None) in self.providers:
                provider = (eff.provider, None)
            else:
                provider = (self.unmentioned[gates(policy, eff.provider)], None)
        raw = (eff.sender.id, eff.sender.e164, eff.sender.username, eff.sender.name)
        sender = tuple(
            self.sender_classes[k].get(v) if v is not None else None for k, v in enumerate(raw)
        )
        trigger = eff.trigger if eff.trigger in TRIGGER_CLASSES else "user"
        return Cell(
            agent,
            provider,
            self._place_of(eff),
            (sender[0], sender[1], sender[2], sender[3]),
            eff.is_owner,
            trigger,
        )

    def _place_of(self, eff: EffectiveContext) -> Place:
        depth = 0
        if eff.subagent_depth > 0:
            depth = 1 if eff.role == "orchestrator" else max(self._depths())
        non_main = depth > 0 or (eff.sandboxed and eff.sandbox_mode == "non-main")
        channel = eff.channel
        configured = self.policy.channels.get(channel) if channel is not None else None
        if channel is None and eff.account is not None and eff.trigger == "cron":
            known = any(eff.account in c.accounts for c in self.policy.channels.values())
            if not known:
                return Place(None, self.other_account, None, non_main, depth)
        if configured is None or channel is None:
            keep = channel if channel in self.sender_channels else None
            if channel is not None and eff.account is not None and eff.trigger == "cron":
                # no channel configuration, so no account one: a scheduled run fails closed
                return Place(keep, self.other_account, None, non_main, depth)
            return Place(keep, None, None, non_main, depth)
        account = eff.account
        if account is not None and account not in configured.accounts:
            if eff.trigger == "cron":  # a scheduled run in a deleted account fails closed
                return Place(channel, self.other_account, None, non_main, depth)
            account = None
        elif account is not None and configured.accounts[account] is None:
            account = None
        if eff.group is None:
            return Place(channel, account, None, non_main, depth)
        groups = group_map(self.policy, channel, account) or {}
        group = self.other_group
        classes = self.group_classes.get((channel, account), {})
        for candidate in group_candidates(eff.group):
            if candidate in groups:
                group = classes.get(candidate, self.other_group)  # "*" is another group
                break
        return Place(channel, account, group, True, depth)

    def indexes(self, max_contexts: int) -> Sequence[int]:
        """Every index, or a deterministic sample of `max_contexts` of them in order."""
        if self.total <= max_contexts:
            return range(self.total)
        return sorted(random.Random(_SEED).sample(range(self.total), max(max_contexts, 0)))


def context_matrix(
    policy: CompiledPolicy,
    max_contexts: int = 2000,
    *,
    agents: Sequence[str | None] | None = None,
    main_keys: Iterable[str] = (),
) -> Matrix:
    """The matrix of `policy` (only the given agents' rows when `agents` is set; `None` in it
    stands for "no agent"), sampled deterministically beyond `max_contexts` cells.

    `main_keys`: the keys naming the main session in the policies `policy` is compared with
    (`main_session_key`); each becomes a session of its own, so that a run whose key one
    policy takes for the main session and the other does not is a cell."""
    dims = Dimensions(policy, agents, main_keys)
    picked = dims.indexes(max_contexts)
    return Matrix(tuple(dims.context_at(i) for i in picked), dims.total, dims.total > len(picked))


def main_session_key(policy: CompiledPolicy) -> str:
    """The key besides `main` that names the policy's main session (semantics 7.6)."""
    return "global" if policy.session_scope == "global" else policy.main_key


def matrix_context(cell: Cell) -> MatrixContext:
    """The run context of a cell, with session keys that say what the place is."""
    agent, place = cell.agent, cell.place
    head = f"agent:{agent}:" if agent else ""
    if place.group is not None:
        where = f"{place.channel}:{place.account}:" if place.account else f"{place.channel}:"
        key = f"{head}{where}group:{place.group}"
    elif place.non_main:
        key = f"{head}dm:matrix"
    else:
        key = f"{head}{place.key or 'main'}"
    spawned_by = None
    if place.depth:
        spawned_by = key
        key = head + ":".join(["subagent:matrix"] * place.depth)
    provider, model = cell.provider
    s_id, e164, username, name = cell.sender
    context = RunContext(
        agent=agent,
        provider=provider,
        model=model,
        channel=place.channel,
        account=place.account,
        group=place.group,
        sender=Sender(s_id, e164, username, name),
        is_owner=cell.owner,
        session_key=key,
        spawned_by=spawned_by,
        subagent_depth=place.depth,
        trigger="cron"
        if cell.trigger == "cron"
        else "memory"
        if cell.trigger == "memory"
        else "user",
    )
    return MatrixContext(_label(cell), context)


def _label(cell: Cell) -> str:
    place = cell.place
    parts = [f"agent={cell.agent}" if cell.agent else "agent=(none)"]
    provider, model = cell.provider
    if provider:
        parts.append(f"provider={provider}" + (f"/{model}" if model else ""))
    if place.group is not None:
        parts.append(
            f"group={place.channel}{'/' + place.account if place.account else ''}/{place.group}"
        )
    else:
        if place.channel is not None:
            parts.append(f"channel={place.channel}")
        if place.account is not None:
            parts.append(f"account={place.account}")
    if place.non_main and place.group is None and not place.depth:
        parts.append("session=non-main")
    if place.key is not None:
        parts.append(f"session={place.key}")
    ident = [f"{k}:{v}" for k, v in zip(SENDER_KINDS, cell.sender, strict=True) if v is not None]
    parts.append("sender=" + (",".join(ident) if ident else "(anonymous)"))
    if place.depth:
        parts.append(f"depth={place.depth}")
    if cell.owner:
        parts.append("owner")
    if cell.trigger != "user":
        parts.append(f"trigger={cell.trigger}")
    return " ".join(parts)


# -- the dimensions' values ------------------------------------------------------------------


def _providers(policy: CompiledPolicy) -> list[tuple[str | None, str | None]]:
    out: list[tuple[str | None, str | None]] = [(None, None)]
    for key in sorted(provider_keys(policy)):
        provider, _, model = key.partition("/")
        out.append((provider, None))
        if model:
            out.append((provider, model))
    for provider in _catalog_provider_classes(policy, {p for p, _ in out if p}):
        out.append((provider, None))
    out.append((_unused(OTHER_PROVIDER, {p for p, _ in out if p}), None))
    return list(dict.fromkeys(out))


def gates(policy: CompiledPolicy, provider: str) -> tuple[bool, ...]:
    """Which provider-gated catalog tools this provider gets (semantics 7.9)."""
    return tuple(provider in t.providers for t in policy.catalog.tools if t.providers)


def _catalog_provider_classes(policy: CompiledPolicy, mentioned: set[str]) -> list[str]:
    """For providers the policy does not mention: one per distinct set of gated tools."""
    candidates = {p for t in policy.catalog.tools if t.providers for p in t.providers}
    seen: dict[tuple[bool, ...], str] = {}
    for provider in sorted(candidates - mentioned):
        seen.setdefault(gates(policy, provider), provider)
    return list(seen.values())


def _content(lp: LayerPolicy | None) -> object:
    """What a matched sender rule does (not where it is written): equal contents, equal runs."""
    if lp is None:
        return "empty"  # a match that restricts nothing, yet wins over a less specific map
    allow = lp.allow.signature if lp.allow is not None else None
    deny = lp.deny.signature if lp.deny is not None else None
    return (allow, deny, lp.grants, _calls_content(lp))


def _calls_content(lp: LayerPolicy) -> object:
    """What a policy's call rules say: groups that differ only in them are different places
    (a diff of one group's `exec(rm *)` must be seen)."""
    calls = lp.calls
    if calls is None:
        return None
    plain = calls.plain_ask.signature if calls.plain_ask is not None else None
    rules = tuple(
        (
            tool,
            tuple(r.entry for r in tr.deny),
            tuple(r.entry for r in tr.ask),
            tuple(r.entry for r in tr.allow),
            tr.name_admitted,
            tr.plain_ask,
            tr.call_default,
        )
        for tool, tr in sorted(calls.tools.items())
    )
    return (rules, plain)


def _group_content(group: GroupPolicy) -> object:
    """What a group's rules do, not where they are written: equal contents, equal runs."""
    tools = _content(group.tools) if group.tools is not None else None
    if group.senders is None:
        return (tools, None)
    rules = sorted(group.senders.policies.items(), key=lambda item: item[0])
    return (tools, tuple((key, _content(lp)) for key, lp in rules))


def _sender_classes(policy: CompiledPolicy) -> list[dict[str, str]]:
    """Per sender field (id, e164, username, name): each value the sender keys use -> the
    value that stands for it, the first of those that every table treats the same way (50,000
    senders in three tiers are three values, not 50,000).

    A value's signature lists, per table and per key spelling the value (`id:42`, then
    `channel:C:42` per sender channel C), what that key does; keys a table lacks are left out
    rather than written as absent, so the signatures are built in one pass over the keys
    (values x tables would be 250 million lookups at the limits)."""
    channels = {c: 1 + i for i, c in enumerate(sorted(_sender_channels(policy)))}
    found: dict[str, dict[str, list[tuple[int, int, object]]]] = {k: {} for k in SENDER_KINDS}
    for index, table in enumerate(sender_tables(policy)):
        for key, lp in table.policies.items():
            kind, _, value = key.partition(":")
            spelling = 0
            if kind == "channel":
                channel, _, value = value.partition(":")
                kind, spelling = "id", channels[channel]
            elif kind not in found:
                continue
            found[kind].setdefault(value, []).append((index, spelling, _content(lp)))

    out: list[dict[str, str]] = []
    for kind in SENDER_KINDS:
        first: dict[tuple[object, ...], str] = {}
        values = found[kind]
        classes = {}
        for value in sorted(values):
            # table order, then spelling order: the same value keyed twice reads the same way
            signature = tuple(sorted(values[value], key=lambda e: (e[0], e[1])))
            classes[value] = first.setdefault(signature, value)
        out.append(classes)
    return out


def _sender_channels(policy: CompiledPolicy) -> set[str]:
    return {
        key.split(":", 2)[1]
        for table in sender_tables(policy)
        for key in table.policies
        if key.startswith("channel:")
    }


def _group_keys(policy: CompiledPolicy) -> set[str]:
    keys: set[str] = set()
    for channel in policy.channels.values():
        for groups in (channel.groups, *channel.accounts.values()):
            keys.update(groups or {})
    return keys


def _unused(name: str, taken: Iterable[str]) -> str:
    """`name`, primed until no key of the policy spells it (a policy may name a group "(other)")."""
    used = set(taken)
    while name in used:
        name += "'"
    return name


def representative(policy: CompiledPolicy, context: RunContext) -> MatrixContext:
    """The matrix cell that stands for `context`: both resolve to the same tools."""
    from ..pipeline.resolve import resolve

    eff = resolve(policy, context, require_tools=False).context
    return matrix_context(Dimensions(policy).cell_of(eff))


def baseline_cell(agent: str | None) -> Cell:
    """An agent's plainest run: no provider, no channel, the main session, an anonymous
    sender, not the owner, a user turn (what `matrix --changed-only` compares against)."""
    return Cell(agent, (None, None), Place(None, None, None, False, 0), _ANONYMOUS, False, "user")


_ANONYMOUS: tuple[str | None, str | None, str | None, str | None] = (None, None, None, None)
