"""What one policy may hold: agents, sender keys and tool-list entries (`Limits.max_*`).

Every command's time and memory grow with these counts (each agent and sender key is a scope
to compile, check and resolve; each entry is matched and reported on). Within the defaults,
every command on one file stays inside its budget of 10 s CPU and 1 GiB
(`tests/adversarial/test_budgets.py`); beyond them the policy is refused with error PC117 at
the first agent, key or entry over the limit, and the setting that raises it. The counts are
taken on located values before anything else is done with them: once per file as it is read
(a 5 MiB file of agents fails in the time it takes to read it) and once after `extends`
merging (the totals).
"""

from __future__ import annotations

from typing import Any

from ..diagnostics import Diagnostic, Source
from ..located import LocMap, LocSeq
from ..settings import Limits

#: the keys whose lists hold tool entries (semantics 4)
ENTRY_KEYS = frozenset({"allow", "deny", "alsoAllow", "ask"})


class _Counts:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.agents = self.senders = self.entries = self.call_rules = 0
        self.over: list[Diagnostic] = []

    def _limit(self, what: str, limit: int, setting: str, where: Source | None) -> None:
        self.over.append(
            Diagnostic.make(
                "PC117",
                f"more than {limit} {what} in one policy",
                where,
                fix=f"split the policy, or raise POLICYCTL_{setting} (each command's time grows "
                f"with the number of {what})",
            )
        )

    def add_agents(self, mapping: LocMap | LocSeq) -> None:
        before = self.agents
        self.agents += len(mapping)
        limit = self.limits.max_agents
        if before <= limit < self.agents:
            self._limit("agents", limit, "MAX_AGENTS", _nth(mapping, limit - before))

    def add_senders(self, mapping: LocMap) -> None:
        before = self.senders
        self.senders += len(mapping)
        limit = self.limits.max_sender_keys
        if before <= limit < self.senders:
            where = _nth(mapping, limit - before)
            self._limit("sender keys", limit, "MAX_SENDER_KEYS", where)

    def add_entries(self, items: LocSeq) -> None:
        before = self.entries
        self.entries += len(items)
        limit = self.limits.max_entries
        if before <= limit < self.entries:
            where = _nth(items, limit - before)
            self._limit("tool-list entries", limit, "MAX_ENTRIES", where)
        limit = self.limits.max_call_rules
        for i, item in enumerate(items):
            if isinstance(item, str) and "(" in item:  # `tool(specifier)`
                self.call_rules += 1
                if self.call_rules == limit + 1:
                    self._limit("call-rule specifiers", limit, "MAX_CALL_RULES", _nth(items, i))


def _nth(node: LocMap | LocSeq, n: int) -> Source | None:
    """Where the n-th (0-based) key or item of a located map or list was written."""
    if isinstance(node, LocMap):
        for i, key in enumerate(node):
            if i == n:
                return node.key_src.get(key) or node.src
        return node.src
    return node.item_src[n] if n < len(node.item_src) else node.src


def size_problems(doc: LocMap, limits: Limits) -> list[Diagnostic]:
    """PC117 for each limit the document exceeds (at most one diagnostic per limit)."""
    counts = _Counts(limits)
    stack: list[tuple[str, str, Any]] = [("", "", doc)]  # (parent key, key, node)
    while stack:
        parent, key, node = stack.pop()
        if isinstance(node, LocMap):
            if key == "toolsBySender":
                counts.add_senders(node)
            elif key == "entries" and parent == "agents":
                counts.add_agents(node)
            stack.extend((key, k, v) for k, v in node.items() if isinstance(v, (LocMap, LocSeq)))
        elif isinstance(node, LocSeq):
            if key in ENTRY_KEYS:
                counts.add_entries(node)
            elif key == "list" and parent == "agents":
                counts.add_agents(node)
            stack.extend((key, "", v) for v in node if isinstance(v, (LocMap, LocSeq)))
    return counts.over
