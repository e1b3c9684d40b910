"""Checks: what `policyctl validate` finds beyond schema errors, over a compiled policy.

- entries that name nothing the catalog or the declared inventory knows (PC410, PC411);
- entries that can never matter: allowed where the same scope denies them (PC412), or denied
  again after the global deny already removes them (PC413);
- a tool denied while a tool the catalog relates to it stays (PC404: `write` denied, and
  `apply_patch`, whose calls are write calls, not);
- a configured sandbox deny list that silently replaces the catalog's default deny (PC414);
- an allow glob meant for a plugin or MCP server that also grants core tools (PC431);
- a group sender rule that shadows the group's tools (PC430, `shadowing.py`), an agent sender
  rule that shadows a global one (PC436);
- allow entries an earlier layer always removes (PC432, `reach.py`);
- a context reachable from what the file declares left with no tools (PC308), or a scope
  declared empty whose runs keep tools (PC309) (see `emptiness`);
- call rules that can never match, allows a deny of the same scope shadows, rules that never
  decide a call (PC470-PC472, `call_checks.py`).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from ..catalog.inventory import MCP_PLUGIN_ID, Inventory
from ..catalog.model import Catalog
from ..compile.compiled import CompiledPolicy, SenderTable, ToolsScope
from ..compile.entries import PLUGINS_GROUP, Entry, EntryList
from ..compile.layers import LayerPolicy
from ..diagnostics import Diagnostic, Severity, did_you_mean
from ..located import list_path
from ..names import Glob, fold, is_glob
from ..pipeline.match import decide, implied_deny
from ..pipeline.resolve import default_inventory
from .emptiness import empty_contexts
from .matrix import DEFAULT_MAX_CONTEXTS, context_matrix
from .matrixwalk import distinct_runs
from .reach import unreachable_entries
from .shadowing import shadowed_global_senders, shadowed_group_tools


@dataclass(frozen=True, slots=True)
class Scope:
    """One configured scope: where it lives, its allow-like lists and its deny list."""

    key: str
    allows: tuple[EntryList, ...]
    deny: EntryList | None


def _policy_scope(key: str, lp: LayerPolicy | None, extra: tuple[EntryList, ...] = ()) -> Scope:
    allows = tuple(x for x in (*extra, lp.allow if lp else None) if x is not None)
    return Scope(key, allows, lp.deny if lp else None)


def _senders(table: SenderTable | None, key: str) -> Iterator[Scope]:
    for sender_key, lp in (table.policies if table else {}).items():
        yield _policy_scope(f"{key}.toolsBySender[{sender_key}]", lp)


def _tools_scope(scope: ToolsScope, key: str) -> Iterator[Scope]:
    yield _policy_scope(key, scope.policy, (scope.also_allow,) if scope.also_allow else ())
    for provider, ps in scope.by_provider.items():
        extra = (ps.also_allow,) if ps.also_allow else ()
        yield _policy_scope(f"{key}.byProvider.{provider}", ps.policy, extra)
    yield from _senders(scope.senders, key)
    if scope.sandbox is not None:
        sb = scope.sandbox
        allows = tuple(x for x in (sb.allow, sb.also_allow) if x is not None)
        yield Scope(f"{key}.sandbox.tools", allows, sb.deny)
    if scope.subagents is not None:
        yield _policy_scope(f"{key}.subagents.tools", scope.subagents)


def iter_scopes(policy: CompiledPolicy) -> Iterator[Scope]:
    yield from _tools_scope(policy.global_tools, "tools")
    if policy.defaults_tools is not None:
        yield from _tools_scope(policy.defaults_tools, "agents.defaults.tools")
    for aid, agent in policy.agents.items():
        if agent.tools is not None:
            yield from _tools_scope(agent.tools, f"agents.entries.{aid}.tools")
    for name, channel in policy.channels.items():
        maps = [(f"channels.{name}.groups", channel.groups)]
        maps += [(f"channels.{name}.accounts.{a}.groups", g) for a, g in channel.accounts.items()]
        for prefix, groups in maps:
            for gid, group in (groups or {}).items():
                yield _policy_scope(f"{prefix}.{gid}.tools", group.tools)
                yield from _senders(group.senders, f"{prefix}.{gid}")


#: how many unknown entries of one file get a did-you-mean
SUGGESTIONS = 500


class _Universe:
    """Everything an entry may name: catalog tools, groups, catalog data, declared tools."""

    def __init__(self, catalog: Catalog, inventory: Inventory) -> None:
        self.catalog = catalog
        self.inventory = inventory
        # Only tools: the chat-channel ids of the sandbox's default deny list (slack,
        # telegram, ...) name channel plugins' tools, which a run has only when its inventory
        # does, so they are unknown here exactly as resolve's PC401/PC402 say (semantics 9).
        named = set(catalog.tool_ids) | set(catalog.owner_only) | set(catalog.aliases.values())
        named.update(catalog.aliases.get(n, n) for n in list(named))
        self.channel_tools = {fold(n) for n in catalog.sandbox_deny if fold(n) not in named} - set(
            catalog.aliases
        )
        self.tools = named | set(inventory.names)
        self.sorted_tools = sorted(self.tools)
        self.suggestions_left = SUGGESTIONS
        self.words = sorted(
            self.tools
            | set(catalog.groups)
            | set(inventory.plugin_ids)
            | {PLUGINS_GROUP, MCP_PLUGIN_ID}
        )

    def knows(self, entry: Entry) -> bool:
        text = entry.text
        if text in ("*", PLUGINS_GROUP, MCP_PLUGIN_ID) or text in self.inventory.plugin_ids:
            return True
        if text.startswith("group:"):
            return text in self.catalog.groups
        if any(text.startswith(p) for p in self.inventory.mcp_prefixes):
            return True
        if is_glob(text):
            # Only names that start with the glob's literal head can match: find them by
            # bisection in the sorted names (200,000 globs x every tool took minutes).
            glob = Glob.compile(text)
            start = bisect.bisect_left(self.sorted_tools, glob.head)
            for name in itertools.islice(self.sorted_tools, start, None):
                if not name.startswith(glob.head):
                    return False
                if glob.matches(name):
                    return True
            return False
        return text in self.tools or text in self.catalog.covers

    def suggest(self, entry: Entry) -> str | None:
        if entry.text in self.channel_tools:
            return (
                f'"{entry.text}" is the tool of the {entry.text} channel plugin: if the '
                f"deployment has it, declare it: inventory: {{plugins: [{{name: {entry.text}, "
                f"pluginId: {entry.text}}}]}}"
            )
        # A did-you-mean costs about a millisecond; a generated file may hold 200,000 unknown
        # entries. The first SUGGESTIONS of a file get one (more than any listing shows).
        if self.suggestions_left <= 0:
            return None
        self.suggestions_left -= 1
        best = did_you_mean(entry.text, self.words)
        return f'did you mean "{best}"?' if best else None


def _glob_grants_core_tools(lst: EntryList, universe: _Universe) -> Iterator[Diagnostic]:
    """An allow glob whose stem is a declared MCP server or plugin (`github_*` next to the MCP
    server `github`) that also matches core tools grants more than it was written for."""
    inv = universe.inventory
    servers = {p.removesuffix("__") for p in inv.mcp_prefixes}
    for entry in _config_entries(lst):
        text = entry.text
        if not is_glob(text) or text == "*":
            continue
        stem = text.split("*", 1)[0].rstrip("_-:.")
        if not stem or (stem not in servers and stem not in inv.plugin_ids):
            continue
        glob = Glob.compile(text)
        core = [t.name for t in inv.tools if t.plugin_id is None and glob.matches(t.name)]
        if not core:
            continue
        own = f"{stem}__*" if stem in servers else stem
        what = "MCP server" if stem in servers else "plugin"
        yield Diagnostic.make(
            "PC431",
            f'"{entry.raw.strip()}" in {list_path(entry.key)} also grants the core tools '
            f"{', '.join(core)}, not only the tools of the {what} {stem}",
            entry.source,
            entry.key,
            f'write "{own}" to allow only the {what}\'s tools',
        )


def _config_entries(lst: EntryList) -> Iterator[Entry]:
    return (e for e in lst.entries if e.origin == "config")


def check_policy(
    policy: CompiledPolicy, *, strict: bool = False, max_contexts: int = DEFAULT_MAX_CONTEXTS
) -> list[Diagnostic]:
    inventory = default_inventory(policy)
    universe = _Universe(policy.catalog, inventory)
    out: list[Diagnostic] = []
    unknown_severity = Severity.ERROR if strict else Severity.WARNING
    global_policy = policy.global_tools.policy
    scopes = list(iter_scopes(policy))

    def add(
        code: str,
        message: str,
        entry: Entry | None,
        fix: str | None = None,
        severity: Severity | None = None,
        source_list: EntryList | None = None,
    ) -> None:
        where = entry.source if entry else (source_list.source if source_list else None)
        path = entry.key if entry else (source_list.key if source_list else "")
        d = Diagnostic.make(code, message, where, path, fix)
        out.append(Diagnostic(d.code, d.message, d.source, d.path, d.fix, severity or d.severity))

    for scope in scopes:
        for lst in scope.allows:
            out.extend(_glob_grants_core_tools(lst, universe))
            for entry in _config_entries(lst):
                if not universe.knows(entry):
                    add(
                        "PC410",
                        f'"{entry.raw.strip()}" in {list_path(entry.key)} names no tool, group or '
                        "plugin of the catalog or the declared inventory",
                        entry,
                        universe.suggest(entry),
                        unknown_severity,
                    )
        if scope.deny is not None:
            for entry in _config_entries(scope.deny):
                if not universe.knows(entry):
                    add(
                        "PC411",
                        f'deny entry "{entry.raw.strip()}" in {list_path(entry.key)} matches '
                        "nothing in the catalog or the declared inventory",
                        entry,
                        universe.suggest(entry),
                        unknown_severity,
                    )
        out.extend(_never_matters(scope, global_policy, policy.catalog))
        out.extend(_related_not_denied(scope, global_policy, policy.catalog))
        if scope.key.endswith("sandbox.tools") and scope.deny is not None:
            out.extend(_sandbox_default_replaced(scope.deny, policy.catalog))
    out.extend(shadowed_group_tools(policy, inventory, strict=strict))
    out.extend(shadowed_global_senders(policy, inventory, strict=strict))
    matrix = context_matrix(policy, max_contexts)
    runs = distinct_runs(policy, matrix)  # the walks ask each distinct run once
    out.extend(unreachable_entries(policy, inventory, matrix, runs))
    out.extend(empty_contexts(matrix, runs))
    if policy.has_call_rules:  # the call-rule core loads only for policies that use it
        from .call_checks import call_rule_checks

        out.extend(call_rule_checks(policy, matrix, strict=strict, runs=runs))
    # an alsoAllow list is read twice (profile layer, and its own scope): report it once
    return list(dict.fromkeys(out))


def _names_of(entry: Entry, catalog: Catalog) -> tuple[str, ...]:
    if entry.text in catalog.groups:
        return catalog.groups[entry.text]
    return catalog.covers.get(entry.text, (entry.text,))


def _never_matters(
    scope: Scope, global_policy: LayerPolicy | None, catalog: Catalog
) -> Iterator[Diagnostic]:
    """Entries that never change a result: allowed where the same scope denies them, or
    denied although layer 3 (which applies to every run) already removes the tool."""
    global_deny = global_policy.deny if global_policy is not None else None
    deny = scope.deny
    if deny is not None:
        for lst in scope.allows:
            for entry in _config_entries(lst):
                if entry.text == "*" or is_glob(entry.text):
                    continue
                hit = deny.match(entry.text)
                if hit is not None:
                    yield Diagnostic.make(
                        "PC412",
                        f'"{entry.text}" is allowed in {list_path(entry.key)} and denied by '
                        f'"{hit.entry.text}" in the same scope: the deny wins, this entry never '
                        "matters",
                        entry.source,
                        entry.key,
                        "remove one of the two entries",
                    )
    if deny is None or global_policy is None or scope.key == "tools":
        return
    global_deny = global_deny if global_deny is not None else _NOTHING
    for entry in _config_entries(deny):
        if entry.text == "*" or is_glob(entry.text):
            continue
        hit = global_deny.match(entry.text)
        if hit is not None:
            where = f" at {hit.entry.source}" if hit.entry.source else ""
            yield Diagnostic.make(
                "PC413",
                f'"{entry.text}" is denied in {list_path(entry.key)}, but tools.deny '
                f'("{hit.entry.text}"{where}) already removes it from every run',
                entry.source,
                entry.key,
                "remove this entry; the global deny covers it",
            )
        elif (
            global_policy is not None
            and global_policy.allow is not None
            and global_policy.allow.restrictive
            and entry.text in catalog.tool_ids
            and decide(entry.text, None, global_policy, catalog) is not None
        ):
            global_allow = global_policy.allow
            where = f" at {global_allow.source}" if global_allow.source else ""
            yield Diagnostic.make(
                "PC413",
                f'"{entry.text}" is denied in {list_path(entry.key)}, but it is not in tools.allow'
                f"{where}, which removes it from every run first",
                entry.source,
                entry.key,
                "remove this entry; the global allow list already excludes it",
            )


_NOTHING = EntryList("", None, ())


def _related_not_denied(
    scope: Scope, global_policy: LayerPolicy | None, catalog: Catalog
) -> Iterator[Diagnostic]:
    """A denied tool whose relatives (catalog `[[relations]]`: tools whose calls are also its
    calls) are not denied: each such call is refused at run time, since the tool it acts as is
    not in the run, while the policy reads as if the relative were usable. A relative the
    global policy already removes is no surprise."""
    deny = scope.deny
    if deny is None:
        return
    global_deny = global_policy.deny if global_policy is not None else None
    relatives: dict[str, list[str]] = {}  # denied tool -> its relatives not denied
    entries: dict[str, Entry] = {}
    for tool, relations in catalog.relations.items():
        if deny.match(tool) is not None or implied_deny(tool, deny, catalog) is not None:
            continue  # denied with it (openclaw-2026.4: a write deny also denies apply_patch)
        if global_deny is not None and global_deny.match(tool) is not None:
            continue
        if global_policy is not None and decide(tool, None, global_policy, catalog) is not None:
            continue
        for relation in relations:
            hit = deny.match(relation.acts_as)
            if hit is None or hit.entry.origin != "config":
                continue
            if tool not in relatives.setdefault(relation.acts_as, []):
                relatives[relation.acts_as].append(tool)
            entries[relation.acts_as] = hit.entry
    for denied, tools in relatives.items():
        entry = entries[denied]
        names = ", ".join(tools)
        yield Diagnostic.make(
            "PC404",
            f"{denied} is denied in {list_path(entry.key)} but {names} "
            f"{'is' if len(tools) == 1 else 'are'} not: {names} also "
            f"{'makes' if len(tools) == 1 else 'make'} {denied} calls (catalog relation), "
            "which the run then refuses",
            entry.source,
            entry.key,
            f"add {names} to {list_path(entry.key)}",
        )


def _sandbox_default_replaced(deny: EntryList, catalog: Catalog) -> Iterator[Diagnostic]:
    dropped = [n for n in catalog.sandbox_deny if deny.match(catalog.aliases.get(n, n)) is None]
    if not dropped:
        return
    shown = ", ".join(dropped[:8]) + (f" and {len(dropped) - 8} more" if len(dropped) > 8 else "")
    yield Diagnostic.make(
        "PC414",
        f"{deny.key} replaces the catalog's default sandbox deny list; these are no "
        f"longer denied in sandboxes: {shown}",
        deny.source,
        deny.key,
        "add the default entries you still want denied, or use alsoAllow to lift single tools",
    )
