"""The context matrix: the distinct runs a policy can tell apart, by equivalence class.

Every agent entry and "no agent"; every provider (and provider/model) key mentioned and
"other"; every group key per channel and account and "other"; every sender key and
"anonymous"; main, orchestrator and leaf depth. Sandboxing follows from the group session key
and the agent's mode. The size is the product of what the file mentions, never of all possible
senders; past `max_contexts` a deterministic sample (by a stable hash) is taken.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from .compile import CompiledPolicy, SenderTable, ToolsScope
from .context import RunContext, Sender

OTHER_GROUP = "(other)"


@dataclass(frozen=True, slots=True)
class MatrixContext:
    """One cell: a run context and a short label such as `agent=coder provider=openai`."""

    label: str
    context: RunContext


@dataclass(frozen=True, slots=True)
class Matrix:
    contexts: tuple[MatrixContext, ...]
    total: int
    sampled: bool


def _scopes(policy: CompiledPolicy) -> list[ToolsScope]:
    scopes = [policy.global_tools]
    if policy.defaults_tools is not None:
        scopes.append(policy.defaults_tools)
    scopes.extend(a.tools for a in policy.agents.values() if a.tools is not None)
    return scopes


def _providers(policy: CompiledPolicy) -> list[tuple[str | None, str | None]]:
    keys: set[str] = set()
    for scope in _scopes(policy):
        keys.update(scope.by_provider)
    out: list[tuple[str | None, str | None]] = [(None, None)]
    for key in sorted(keys):
        provider, _, model = key.partition("/")
        out.append((provider, model or None))
        if model:
            out.append((provider, f"{model}-other"))
    out.append(("other-provider", None))
    return list(dict.fromkeys(out))


def _sender_tables(policy: CompiledPolicy) -> list[SenderTable]:
    tables = [s.senders for s in _scopes(policy) if s.senders is not None]
    for channel in policy.channels.values():
        group_maps = [channel.groups, *channel.accounts.values()]
        for groups in group_maps:
            for group in (groups or {}).values():
                if group.senders is not None:
                    tables.append(group.senders)
    return tables


def _senders(policy: CompiledPolicy) -> list[tuple[str, Sender, str | None]]:
    """(label, sender, channel the key is scoped to)."""
    out: list[tuple[str, Sender, str | None]] = [("anonymous", Sender(), None)]
    keys = sorted({k for table in _sender_tables(policy) for k in table.policies})
    for key in keys:
        kind, _, value = key.partition(":")
        if key == "*":
            out.append(("sender=other", Sender(id="someone-else"), None))
        elif kind == "channel":
            channel, _, sender_id = value.partition(":")
            out.append((f"sender={key}", Sender(id=sender_id), channel))
        elif kind in ("id", "e164", "username", "name"):
            out.append((f"sender={key}", Sender(**{kind: value}), None))
    return out


def _groups(policy: CompiledPolicy) -> list[tuple[str | None, str | None, str | None]]:
    """(channel, account, group)."""
    out: list[tuple[str | None, str | None, str | None]] = [(None, None, None)]
    for name in sorted(policy.channels):
        channel = policy.channels[name]
        for gid in sorted(channel.groups or {}):
            out.append((name, None, OTHER_GROUP if gid == "*" else gid))
        out.append((name, None, OTHER_GROUP))
        for account in sorted(channel.accounts):
            for gid in sorted(channel.accounts[account] or {}):
                out.append((name, account, OTHER_GROUP if gid == "*" else gid))
    return list(dict.fromkeys(out))


def _cells(policy: CompiledPolicy) -> Iterator[MatrixContext]:
    agents: list[str | None] = [None, *sorted(policy.agents)]
    depths = sorted({0, 1, policy.max_spawn_depth})
    for agent, (provider, model), (channel, account, group), (
        s_label,
        sender,
        s_channel,
    ), depth in itertools.product(
        agents, _providers(policy), _groups(policy), _senders(policy), depths
    ):
        if s_channel is not None and s_channel != channel:
            continue
        who = agent or "default"
        if group is not None:
            prefix = f"{channel}:{account}:group" if account else f"{channel}:group"
            key = f"agent:{who}:{prefix}:{group}"
        else:
            key = f"agent:{who}:main"
        spawned_by = None
        if depth:
            spawned_by = key
            key = f"agent:{who}" + ":subagent:matrix" * depth
        parts = [f"agent={agent}" if agent else "agent=(none)"]
        if provider:
            parts.append(f"provider={provider}" + (f"/{model}" if model else ""))
        if group is not None:
            parts.append(f"group={channel}{'/' + account if account else ''}/{group}")
        parts.append(s_label if s_label != "anonymous" else "sender=(anonymous)")
        if depth:
            parts.append(f"depth={depth}")
        yield MatrixContext(
            " ".join(parts),
            RunContext(
                agent=agent,
                provider=provider,
                model=model,
                channel=channel,
                account=account,
                group=group,
                sender=sender,
                session_key=key,
                spawned_by=spawned_by,
                subagent_depth=depth,
            ),
        )


def context_matrix(policy: CompiledPolicy, max_contexts: int = 2000) -> Matrix:
    cells = list(_cells(policy))
    total = len(cells)
    if total <= max_contexts:
        return Matrix(tuple(cells), total, False)
    # Deterministic sample: the cells whose label hashes lowest, kept in enumeration order.
    ranked = sorted(range(total), key=lambda i: hashlib.sha256(cells[i].label.encode()).digest())
    keep = sorted(ranked[:max_contexts])
    return Matrix(tuple(cells[i] for i in keep), total, True)
