"""A group's `toolsBySender` that shadows the group's `tools` (PC430), and an agent's
`toolsBySender` entry that shadows a global `toolsBySender` entry (PC436).

In a channel group the first hit wins (semantics 7.4): a matching sender rule of the group is
used *instead of* the group's `tools`, and a specific group's sender rule also comes before the
`*` group's `tools` when the group has no `tools` of its own. OpenClaw does the same; the hole
is that a deny written for the whole group silently leaves the senders a rule matches. This
check names, per sender rule, the group entries that no longer apply to its senders, and a fix
that repeats them in the rule (applying it makes the warning go away).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from ..catalog.inventory import Inventory
from ..catalog.model import Catalog
from ..compile.compiled import CompiledPolicy, GroupPolicy
from ..compile.layers import LayerPolicy
from ..diagnostics import Diagnostic, Severity
from ..located import join_path
from ..pipeline.match import decide


def _shadowed(
    group: LayerPolicy, rule: LayerPolicy | None, inv: Inventory, cat: Catalog
) -> tuple[list[str], bool]:
    """The group's deny entries (as written) that stop applying under `rule`, and whether
    the group's allow restriction stops applying too."""
    denies: list[str] = []
    allow_lost = False
    for tool in inv.tools:
        by_group = decide(tool.name, tool.plugin_id, group, cat)
        if by_group is None:
            continue
        if rule is not None and decide(tool.name, tool.plugin_id, rule, cat) is not None:
            continue
        kind, hit = by_group
        if kind == "deny" and hit is not None:
            if hit.entry.origin == "config":
                denies.append(hit.entry.raw.strip())
        else:
            allow_lost = True
    order = {e.raw.strip(): i for i, e in enumerate(group.deny.entries if group.deny else ())}
    return sorted(dict.fromkeys(denies), key=lambda e: order.get(e, 0)), allow_lost


def _signature(rule: LayerPolicy | None) -> tuple[object, ...]:
    if rule is None:
        return ()
    lists = (rule.allow, rule.deny)
    return tuple(None if x is None else (x.signature, x.wildcard is not None) for x in lists)


def _quote(entries: list[str]) -> str:
    return ", ".join(f'"{e}"' for e in entries)


@dataclass
class _Finding:
    """Sender entries of one group (their key paths) that lose the same group entries."""

    rule: LayerPolicy | None
    denies: list[str]
    allow_lost: bool
    keys: list[str] = field(default_factory=list)


def _diagnostic(
    f: _Finding, table: str, tools_key: str, group: LayerPolicy, where: str
) -> Diagnostic:
    many = len(f.keys) > 1
    if many:
        shown = ", ".join(k.rsplit("toolsBySender", 1)[-1].strip("[]") for k in f.keys[:3])
        more = f" and {len(f.keys) - 3} more" if len(f.keys) > 3 else ""
        subject = f"{len(f.keys)} entries of {table} ({shown}{more}) are used"
        matched, deny_key, allow_key = "they match", "the deny of each", "the allow of each"
    else:
        subject = f"{f.keys[0]} is used"
        matched, deny_key, allow_key = "it matches", f"{f.keys[0]}.deny", f"{f.keys[0]}.allow"
    lost, fixes = [], []
    if f.denies:
        lost.append(f"the deny entries {_quote(f.denies)}")
        fixes.append(f"add {_quote(f.denies)} to {deny_key}")
    if f.allow_lost and group.allow is not None:
        lost.append(f"the allow list {group.allow.key}")
        allowed = [e.raw.strip() for e in group.allow.entries if e.origin == "config"]
        rule = f.rule
        narrowing = rule is not None and rule.allow is not None and rule.allow.wildcard is None
        verb = "narrow" if narrowing else "set"
        fixes.append(f"{verb} {allow_key} to [{_quote(allowed)}] (replacing any alsoAllow)")
    # located at the rule's own lists when it has any, else at the group's lists
    lists = [x for p in (f.rule, group) if p is not None for x in (p.deny, p.allow) if x]
    return Diagnostic.make(
        "PC430",
        f"{subject} instead of {tools_key} for the senders {matched} (first hit wins){where}: "
        f"{' and '.join(lost)} do not apply to them",
        next((x.source for x in lists if x.source is not None), None),
        f.keys[0],
        "; ".join(fixes) + " (or move the rule out of the group if that is intended)",
    )


def _groups_maps(policy: CompiledPolicy) -> Iterator[tuple[str, Mapping[str, GroupPolicy]]]:
    for name, channel in policy.channels.items():
        if channel.groups:
            yield f"channels.{name}.groups", channel.groups
        for account, groups in channel.accounts.items():
            if groups:
                yield f"channels.{name}.accounts.{account}.groups", groups


def shadowed_group_tools(
    policy: CompiledPolicy, inventory: Inventory, *, strict: bool = False
) -> Iterator[Diagnostic]:
    cat = policy.catalog
    for prefix, groups in _groups_maps(policy):
        wildcard = groups.get("*")
        for gid, group in groups.items():
            if group.senders is None:
                continue
            tools, owner = group.tools, gid
            if tools is None and gid != "*" and wildcard is not None:
                tools, owner = wildcard.tools, "*"
            if tools is None:
                continue
            tools_key = f"{join_path(prefix, owner)}.tools"
            where = "" if owner == gid else " (the group has no tools of its own)"
            # sender maps can be large and their rules alike: judge each distinct rule once,
            # and report the entries that lose the same group entries together
            table = f"{join_path(prefix, gid)}.toolsBySender"
            findings: dict[tuple[object, ...], _Finding] = {}
            for key, rule in group.senders.policies.items():
                sig = _signature(rule)
                if sig not in findings:
                    findings[sig] = _Finding(rule, *_shadowed(tools, rule, inventory, cat))
                found = findings[sig]
                if found.denies or found.allow_lost:
                    found.keys.append(rule.scope if rule is not None else join_path(table, key))
            for found in findings.values():
                if not found.keys:
                    continue
                d = _diagnostic(found, table, tools_key, tools, where)
                if strict:
                    d = Diagnostic(d.code, d.message, d.source, d.path, d.fix, Severity.ERROR)
                yield d


class _GlobalRivals:
    """The global sender keys a sender matching an agent's key would otherwise hit.

    Layer 8 takes one policy: the agent's match wins over the global one (semantics 7.5). An
    agent `*` replaces every global rule; any other key replaces the global rule of the same
    key, the channel-scoped and plain id forms of the same id, and the global `*`. The
    channel-scoped keys are indexed by id once: a scan of the global table per agent key is
    25,000 x 25,000 comparisons at the limits.
    """

    def __init__(self, table: Mapping[str, LayerPolicy | None]) -> None:
        self.table = table
        self.order = {k: i for i, k in enumerate(table)}
        self.channel_ids: dict[str, list[str]] = {}
        for k in table:
            if k.startswith("channel:"):
                self.channel_ids.setdefault(k.rsplit(":", 1)[-1], []).append(k)

    def of(self, key: str) -> list[str]:
        table = self.table
        if key == "*":
            return list(table)
        kind, _, rest = key.partition(":")
        same = {key}
        if kind == "id":
            same.update(self.channel_ids.get(rest, ()))
        elif kind == "channel":
            same.add(f"id:{rest.rsplit(':', 1)[-1]}")
        rivals = sorted((k for k in same if k in table), key=self.order.__getitem__)
        if "*" in table:
            rivals.append("*")
        return rivals


def shadowed_global_senders(
    policy: CompiledPolicy, inventory: Inventory, *, strict: bool = False
) -> Iterator[Diagnostic]:
    """PC436: an agent's sender entry whose senders lose entries of a global sender entry."""
    cat = policy.catalog
    glob = policy.global_tools.senders
    if glob is None or not glob.policies:
        return
    judged: dict[tuple[object, ...], tuple[list[str], bool]] = {}
    rivals = _GlobalRivals(glob.policies)
    for agent in policy.agents.values():
        scope = agent.tools
        if scope is None or scope.senders is None:
            continue
        table = f"{scope.name}.toolsBySender"
        for key, rule in scope.senders.policies.items():
            rule_key = rule.scope if rule is not None else join_path(table, key)
            for rival in rivals.of(key):
                global_rule = glob.policies[rival]
                if global_rule is None:
                    continue
                # many agents repeat one rule: judge each (rule, global rule) pair once
                memo = (*_signature(rule), rival)
                if memo not in judged:
                    judged[memo] = _shadowed(global_rule, rule, inventory, cat)
                denies, allow_lost = judged[memo]
                lost, fixes = [], []
                if denies:
                    lost.append(f"the deny entries {_quote(denies)}")
                    fixes.append(f"add {_quote(denies)} to {rule_key}.deny")
                if allow_lost and global_rule.allow is not None:
                    lost.append(f"the allow list {global_rule.allow.key}")
                    allowed = [e.raw.strip() for e in global_rule.allow.entries]
                    fixes.append(f"narrow {rule_key}.allow to [{_quote(allowed)}]")
                if not lost:
                    continue
                lists = [
                    x for p in (rule, global_rule) if p is not None for x in (p.deny, p.allow) if x
                ]
                d = Diagnostic.make(
                    "PC436",
                    f"{rule_key} is used instead of {global_rule.scope} for the senders it "
                    f"matches (the agent's match wins): {' and '.join(lost)} do not apply to "
                    "them",
                    next((x.source for x in lists if x.source is not None), None),
                    rule_key,
                    "; ".join(fixes) + " (or drop the global rule if that is intended)",
                )
                if strict:
                    d = Diagnostic(d.code, d.message, d.source, d.path, d.fix, Severity.ERROR)
                yield d
