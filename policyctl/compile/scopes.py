"""Compile: a validated document + its catalog -> an immutable `CompiledPolicy`.

Every entry is normalised, checked against the ASCII rule and expanded here, once. Every scope
that a layer may apply is indexed by what selects it (agent id, provider key, channel, group
id, sender key), so that resolving a run is a handful of lookups whatever the size of the file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from ..catalog.commands import CommandCatalog, builtin_commands
from ..catalog.inventory import Inventory, Tool, core_tools, marks_mcp, mcp_tools
from ..catalog.model import Catalog
from ..diagnostics import Diagnostic, PolicyError, Severity, did_you_mean, suggestion
from ..document.keys import normal_key, own_session_kind
from ..document.model import AgentEntry, GroupConfig, PolicyDocument, ToolPolicy, ToolsConfig
from ..located import LocationIndex, format_path, join_path, scope_list
from ..names import (
    SENDER_KINDS,
    ascii_problem,
    entry_syntax,
    fold,
    identifier_problem,
    mcp_server_problem,
    normalize,
    plugin_id_syntax,
    provider_key,
    sender_key,
    sender_key_problem,
    shown,
)
from .assemble import Assembler
from .calls import CallCompiler, CallLists, ListName, is_call_rule
from .closedgroups import is_unknown_group, unknown_group_problem
from .compiled import (
    AgentPolicy,
    ChannelPolicy,
    CompiledPolicy,
    GroupPolicy,
    ProviderScope,
    SandboxLists,
    ScopeLayers,
    SenderTable,
    ToolsScope,
)
from .entries import Entry, EntryList, Origin, build_list
from .layers import LayerPolicy

if TYPE_CHECKING:
    from ..callrules.model import Rule

DocPath = tuple[str | int, ...]
#: a did-you-mean costs up to a millisecond; past this many problems in a file, none is offered
_SUGGESTIONS = 100
K = TypeVar("K")
V = TypeVar("V")


class _CallSink:
    """Where one list's `tool(specifier)` entries go while its names are read."""

    __slots__ = ("effect", "plain", "rules")

    def __init__(self, effect: ListName) -> None:
        self.effect: ListName = effect
        self.rules: list[Rule] = []
        self.plain = 0

    @property
    def only_rules(self) -> bool:
        """The list holds call rules and no names: it does not configure names (contract 3)."""
        return bool(self.rules) and not self.plain

    def found(self) -> tuple[Rule, ...] | None:
        return tuple(self.rules) if self.rules else None


def frozen(mapping: dict[K, V]) -> Mapping[K, V]:
    """A read-only view: compiled values are shared across threads and never written."""
    return MappingProxyType(mapping)


class _Compiler:
    def __init__(self, doc: PolicyDocument, index: LocationIndex, catalog: Catalog) -> None:
        self.doc = doc
        self.index = index
        self.catalog = catalog
        self.problems: list[Diagnostic] = []
        self.calls = CallCompiler(catalog, self.problems)

    def report(
        self, code: str, message: str, path: DocPath, fix: str | None = None, key: bool = False
    ) -> None:
        where = self.index.key(path) if key else self.index.value(path)
        self.problems.append(Diagnostic.make(code, message, where, format_path(path), fix))

    def check_id(self, ident: str, what: str, path: DocPath, key: bool = True) -> None:
        """PC301 for a scope id that is not printable ASCII (a look-alike of another id)."""
        bad = identifier_problem(fold(ident))
        if bad:
            self.report(
                "PC301",
                f'{what} "{shown(ident.strip())}": {bad}',
                path,
                key=key,
                fix=f"write the {what} in ASCII; a look-alike id selects a scope no run has",
            )

    # -- entries ------------------------------------------------------------------------------

    def entries(
        self,
        raw: Sequence[str] | None,
        path: DocPath,
        origin: Origin = "config",
        where: str | None = None,
        calls: _CallSink | None = None,
    ) -> list[Entry]:
        """The list's names; its `tool(specifier)` entries go to `calls` (an allow specifier
        also admits its tool by name). Without `calls` (alsoAllow) a specifier is an error."""
        out: list[Entry] = []
        prefix = (where if where is not None else format_path(path)) if raw else ""
        for i, text in enumerate(raw or ()):
            if is_call_rule(text):
                self.call_entry(text, (*path, i), f"{prefix}[{i}]", origin, calls, out)
                continue
            if calls is not None:
                calls.plain += 1
            norm = normalize(text, self.catalog.aliases)
            if not norm:
                continue
            bad = ascii_problem(norm)
            if bad:
                self.report(
                    "PC301",
                    f'entry "{text.strip()}" in {format_path(path)}: {bad}',
                    (*path, i),
                    fix="retype the entry in plain ASCII",
                )
                continue
            if origin == "config" and is_unknown_group(norm, self.catalog):
                suggest = len(self.problems) < _SUGGESTIONS
                message, fix = unknown_group_problem(
                    text, norm, format_path(path), self.catalog, suggest
                )
                self.report("PC320", message, (*path, i), fix=fix)
                continue
            out.append(Entry(norm, text, f"{prefix}[{i}]", self.index.value((*path, i)), origin))
        return out

    def call_entry(
        self,
        text: str,
        path: DocPath,
        key: str,
        origin: Origin,
        calls: _CallSink | None,
        out: list[Entry],
    ) -> None:
        source = self.index.value(path)
        if calls is None:
            self.report(
                "PC356",
                f'call rule "{text.strip()}" in {format_path(path[:-1])}: alsoAllow widens '
                "names, call rules narrow calls",
                path,
                fix="move it to allow (it admits the tool there and restricts its calls)",
            )
            return
        found = self.calls.rules(text, calls.effect, source, format_path(path))
        if found is None:
            return
        tool, rules = found
        calls.rules.extend(rules)
        if calls.effect == "allow":
            out.append(Entry(tool, text, key, source, origin))

    def entry_list(
        self,
        raw: Sequence[str] | None,
        path: DocPath,
        extra: Sequence[Entry] = (),
        origin: Origin = "config",
        where: str | None = None,
        calls: _CallSink | None = None,
    ) -> EntryList:
        where = where if where is not None else format_path(path)
        return build_list(
            where,
            self.index.value(path),
            [*extra, *self.entries(raw, path, origin, where, calls)],
            self.catalog.groups,
            self.catalog.covers,
            core=self.catalog.tool_ids,
        )

    def policy_lists(
        self, tp: ToolPolicy, path: DocPath, where: str
    ) -> tuple[EntryList | None, EntryList | None, CallLists]:
        """One scope's allow and deny names and its call rules (contract sections 1-3).

        A list of call rules only does not configure that list at name level (None): a
        sandbox's defaults stay beside `deny: ["exec(rm *)"]`, and `allow: ["exec(git *)"]`
        restricts exec's calls, not the scope's tools. Beside names, an allow specifier admits
        its tool like the plain name would."""
        allow_sink, deny_sink, ask_sink = _CallSink("allow"), _CallSink("deny"), _CallSink("ask")
        allow = plain_allow = None
        if tp.allow is not None:
            names = self.entries(
                tp.allow, (*path, "allow"), where=scope_list(where, "allow"), calls=allow_sink
            )
            cat = self.catalog
            allow = build_list(
                scope_list(where, "allow"),
                self.index.value((*path, "allow")),
                names,
                cat.groups,
                cat.covers,
            )
            if allow_sink.rules:
                plain = [e for e in names if not is_call_rule(e.raw)]
                plain_allow = build_list("", None, plain, cat.groups, cat.covers)
            if allow_sink.only_rules:
                allow = None
        deny = None
        if tp.deny is not None:
            deny = self.entry_list(
                tp.deny, (*path, "deny"), where=scope_list(where, "deny"), calls=deny_sink
            )
            if deny_sink.only_rules:
                deny = None
        plain_ask = None
        if tp.ask is not None:
            plain_ask = self.entry_list(
                tp.ask, (*path, "ask"), where=scope_list(where, "ask"), calls=ask_sink
            )
            if plain_ask.empty:
                plain_ask = None
        default = None
        if tp.call_default is not None:
            from ..callrules.model import Effect

            default = Effect.ASK if tp.call_default == "ask" else Effect.DENY
        lists = CallLists(
            deny_sink.found(),
            ask_sink.found(),
            allow_sink.found(),
            plain_ask,
            plain_allow,
            default,
            self.index.value((*path, "callDefault")) if default is not None else None,
        )
        return allow, deny, lists

    def scope_policy(
        self, tp: ToolPolicy | None, path: DocPath, label: str, where: str | None = None
    ) -> LayerPolicy | None:
        """Semantics 6: allow, alsoAllow and deny of one scope -> one policy (or none).

        `where` is `format_path(path)` when the caller already has it (sender maps are large)."""
        if tp is None:
            return None
        where = where if where is not None else format_path(path)
        if tp.allow and tp.also_allow:
            self.report(
                "PC303",
                "tools cannot set both allow and alsoAllow in the same scope",
                (*path, "alsoAllow"),
                key=True,
                fix="merge alsoAllow into allow, or remove allow and use profile + alsoAllow",
            )
        allow, deny, lists = self.policy_lists(tp, path, where)
        if allow is None and tp.also_allow:
            also_where = scope_list(where, "alsoAllow")
            star = Entry("*", "*", also_where, self.index.value((*path, "alsoAllow")), "catalog")
            allow = self.entry_list(
                tp.also_allow, (*path, "alsoAllow"), extra=[star], where=also_where
            )
        calls = self.calls.scope_calls(lists)
        # a declared-empty scope applies even with nothing to remove: validate must see it
        # to report the runs it leaves with tools (PC309)
        declared = self.index.value((*path, "expectEmpty")) if tp.expect_empty else None
        if allow is None and deny is None and calls is None and declared is None:
            return None
        return LayerPolicy(label, where, allow, deny, calls=calls, expect_empty=declared)

    def senders(
        self, raw: Mapping[str, ToolPolicy] | None, path: DocPath, label: str
    ) -> SenderTable | None:
        if raw is None:
            return None
        table: dict[str, LayerPolicy | None] = {}
        prefix = format_path(path)
        written: set[str | None] = set()
        for key, tp in raw.items():
            norm = self.sender_key(key, (*path, key))
            if norm is None:
                continue
            if norm in table:
                if not _already_reported("sender", key, written):
                    self.report(
                        "PC307", f'sender key "{key}" repeats "{norm}"', (*path, key), key=True
                    )
                continue
            written.add(normal_key("sender", key))
            table[norm] = self.scope_policy(tp, (*path, key), label, join_path(prefix, key))
        return SenderTable(label, frozen(table))

    def sender_key(self, key: str, path: DocPath) -> str | None:
        parsed = sender_key(key)
        if parsed.problem is not None:
            self.report("PC307", f'sender key "{key}" {parsed.problem}', path, key=True)
            return None
        bad = sender_key_problem(parsed.norm or "")
        if bad:
            self.report(
                "PC301",
                f'sender key "{shown(key.strip())}": {bad}',
                path,
                key=True,
                fix="retype the key: a look-alike or invisible character makes a key no sender has",
            )
            return None
        if parsed.legacy:
            text = key.strip()
            kind, sep, value = text.partition(":")
            near = did_you_mean(kind.lower(), SENDER_KINDS) if sep and value.strip() else None
            if near is not None:
                # `idd:42` is a typo of `id:42`; read as untyped it would match no sender at all
                self.report(
                    "PC321",
                    f'sender key "{key}": "{kind.lower()}" is not a sender key type, so the key '
                    f'would match the sender id "{text.lower()}" only',
                    path,
                    key=True,
                    fix=f'write "{near}:{value.strip()}"',
                )
                return None
            self.report(
                "PC403",
                f'untyped sender key "{key}" is matched as a sender id only',
                path,
                key=True,
                fix=f'write "id:{text}"',
            )
        return parsed.norm

    def check_profile(self, name: str | None, path: DocPath) -> str | None:
        if name is None:
            return None
        norm = fold(name)
        if norm not in self.catalog.profiles:
            known = sorted(self.catalog.profiles)
            self.report(
                "PC302",
                f'unknown profile "{name}" (catalog {self.catalog.name} has {", ".join(known)})',
                path,
                fix=suggestion(norm, known),
            )
            return None
        return norm

    # -- scopes -------------------------------------------------------------------------------

    def tools_scope(
        self, tc: ToolsConfig | None, path: DocPath, name: str, agent: str | None
    ) -> ToolsScope:
        tc = tc or ToolsConfig()
        prefix = f"agents.{agent}." if agent else ""
        profile = self.check_profile(tc.profile, (*path, "profile"))
        also = (
            self.entry_list(tc.also_allow, (*path, "alsoAllow"))
            if tc.also_allow is not None
            else None
        )
        policy = self.scope_policy(tc, path, f"{prefix}tools.allow")
        by_provider: dict[str, ProviderScope] = {}
        first: dict[str, str] = {}
        written: set[str | None] = set()
        for key, ptc in (tc.by_provider or {}).items():
            ppath = (*path, "byProvider", key)
            self.check_id(key, "byProvider key", ppath)
            norm = provider_key(key, self.catalog.canonical_provider)
            if norm in by_provider:
                # a repeat only the catalog's provider aliases reveal (`bedrock` next to
                # `amazon-bedrock`); one spelled alike is PC311's, reported once
                if not _already_reported("provider", key, written):
                    self.report(
                        "PC380",
                        f'byProvider key "{key}" repeats "{first[norm]}": both are provider '
                        f'"{norm}"',
                        ppath,
                        key=True,
                        fix=f'merge the two into one "{first[norm]}" entry',
                    )
                continue
            first[norm] = key
            written.add(normal_key("provider", key))
            by_provider[norm] = ProviderScope(
                format_path(ppath),
                self.check_profile(ptc.profile, (*ppath, "profile")),
                self.index.value((*ppath, "profile")),
                self.entry_list(ptc.also_allow, (*ppath, "alsoAllow"))
                if ptc.also_allow is not None
                else None,
                self.scope_policy(ptc, ppath, f"{prefix}tools.byProvider.allow"),
            )
        # OpenClaw's label for layer 8 whichever table matched (semantics 7); the scope
        # (`agents.entries.<id>.tools.toolsBySender["*"]`) says which one
        senders = self.senders(tc.tools_by_sender, (*path, "toolsBySender"), "tools.toolsBySender")
        sandbox = None
        if tc.sandbox is not None and tc.sandbox.tools is not None:
            st, spath = tc.sandbox.tools, (*path, "sandbox", "tools")
            if st.expect_empty:
                self.report(
                    "PC310",
                    "expectEmpty cannot be declared on the sandbox policy: whether a run is "
                    "sandboxed depends on its session, not on a scope an operator bans",
                    (*spath, "expectEmpty"),
                    key=True,
                    fix="declare expectEmpty on the agent, group or sender scope whose runs "
                    "have no tools on purpose",
                )
            s_allow, s_deny, s_calls = self.policy_lists(st, spath, format_path(spath))
            sandbox = SandboxLists(
                s_allow,
                self.entry_list(st.also_allow, (*spath, "alsoAllow"))
                if st.also_allow is not None
                else None,
                s_deny,
                s_calls,
            )
        subagents = None
        if tc.subagents is not None and tc.subagents.tools is not None:
            spath = (*path, "subagents", "tools")
            subagents = self.scope_policy(tc.subagents.tools, spath, "subagent tools.allow")
        return ToolsScope(
            name,
            profile,
            self.index.value((*path, "profile")),
            also,
            policy,
            frozen(by_provider),
            senders,
            sandbox,
            subagents,
        )

    def group(self, gc: GroupConfig, path: DocPath) -> GroupPolicy:
        return GroupPolicy(
            self.scope_policy(gc.tools, (*path, "tools"), "group tools.allow"),
            # a group's sender rule is layer 7, labelled as OpenClaw labels the group layer
            self.senders(gc.tools_by_sender, (*path, "toolsBySender"), "group tools.allow"),
        )

    def groups(
        self, raw: Mapping[str, GroupConfig] | None, path: DocPath
    ) -> Mapping[str, GroupPolicy] | None:
        if raw is None:
            return None
        for gid in raw:
            self.check_id(gid, "group id", (*path, gid))
        return frozen({gid: self.group(gc, (*path, gid)) for gid, gc in raw.items()})

    def agents(self) -> dict[str, AgentPolicy]:
        out: dict[str, AgentPolicy] = {}
        agents = self.doc.agents
        if agents is None:
            return out
        rows: list[tuple[str, AgentEntry, DocPath]] = [
            (aid, entry, ("agents", "entries", aid))
            for aid, entry in (agents.entries or {}).items()
        ]
        for i, item in enumerate(agents.legacy_list or ()):
            rows.append((item.id, item, ("agents", "list", i)))
        if agents.legacy_list:
            self.report(
                "PC408",
                "agents.list is the legacy shape of agents.entries",
                ("agents", "list"),
                key=True,
                fix="run `policyctl fmt --migrate`",
            )
        for aid, entry, path in rows:
            norm = fold(aid)
            if not norm:
                self.report("PC203", "agent id must not be empty", path, key=True)
                continue
            if norm in out:
                self.report("PC306", f'agent "{aid}" is defined twice', path, key=True)
                continue
            if path[1] == "list":
                self.check_id(aid, "agent id", (*path, "id"), key=False)
            else:
                self.check_id(aid, "agent id", path)
            scope = (
                self.tools_scope(entry.tools, (*path, "tools"), format_path((*path, "tools")), norm)
                if entry.tools is not None
                else None
            )
            out[norm] = AgentPolicy(norm, scope, entry.sandbox.mode if entry.sandbox else None)
        return out

    def channels(self) -> dict[str, ChannelPolicy]:
        out: dict[str, ChannelPolicy] = {}
        for name, cc in (self.doc.channels or {}).items():
            path: DocPath = ("channels", name)
            self.check_id(name, "channel", path)
            for acct in cc.accounts or {}:
                self.check_id(acct, "account", (*path, "accounts", acct))
            accounts = {
                acct: self.groups(ac.groups, (*path, "accounts", acct, "groups"))
                for acct, ac in (cc.accounts or {}).items()
            }
            out[fold(name)] = ChannelPolicy(
                self.groups(cc.groups, (*path, "groups")), frozen(accounts)
            )
        return out

    def declared_tools(self) -> tuple[Tool, ...]:
        inv = self.doc.inventory
        if inv is None:
            return ()
        declared = list(inv.plugins or ())
        # a declared `bundle-mcp` id is refused below (PC385); the tool is never an MCP tool
        tools = [
            Tool(p.name, None if marks_mcp(p.plugin_id) else p.plugin_id, p.optional)
            for p in declared
        ]
        servers = {name: decl.tools for name, decl in (inv.mcp or {}).items()}
        # (two names with one normal form are PC311 already)
        for name in servers:
            ambiguous = mcp_server_problem(name)
            if ambiguous:
                self.report(
                    "PC322",
                    f'MCP server "{shown(name.strip())}" {ambiguous}',
                    ("inventory", "mcp", name),
                    fix="name the server with at most 30 characters, without `__` and "
                    "without a trailing `_` (`ops-admin`)",
                    key=True,
                )
        tools.extend(mcp_tools(servers))
        plugin_count = len(inv.plugins or ())
        plugin_ids = {fold(t.plugin_id) for t in tools if t.plugin_id}
        cat = self.catalog
        for i, t in enumerate(tools):
            # MCP tools are located at their server; plugin tools at their own entry
            path: DocPath = (
                ("inventory", "plugins", i, "name") if i < plugin_count else ("inventory", "mcp")
            )
            given = declared[i].plugin_id if i < plugin_count else t.plugin_id
            plugin = fold(given or "")
            if i < plugin_count and (plugin in cat.tool_ids or plugin in cat.aliases):
                self.report(
                    "PC382",
                    f'plugin id "{given}" is the name of a core tool: `allow: '
                    f"[{plugin}]` would grant every tool of the plugin",
                    ("inventory", "plugins", i, "pluginId"),
                    fix="give the plugin an id that no core tool has",
                )
            reserved = plugin_id_syntax(plugin) if i < plugin_count and plugin else None
            if reserved:
                self.report(
                    "PC385",
                    f'plugin id "{given}" {reserved}: entries written for it would grant '
                    "every tool of the plugin",
                    ("inventory", "plugins", i, "pluginId"),
                    fix="give the plugin an id that is not entry syntax",
                )
            name = normalize(t.name, cat.aliases)
            bad = ascii_problem(name)
            others = plugin_ids - {plugin} if plugin else plugin_ids
            syntax = entry_syntax(name, others) if not bad else None
            if bad:
                self.report("PC301", f'tool name "{t.name}": {bad}', path)
            elif syntax:
                self.report(
                    "PC381",
                    f'tool name "{t.name}" {syntax}',
                    path,
                    fix="rename the tool: a tool name is one literal name",
                )
            elif name in cat.tool_ids:
                self.report(
                    "PC405",
                    f'plugin {t.plugin_id} declares "{name}", which is a core '
                    "tool; the plugin tool will be dropped",
                    path,
                    fix="rename the plugin tool",
                )
        return tuple(tools)


def _already_reported(kind: str, key: str, written: set[str | None]) -> bool:
    """Whether a repeated key repeats an earlier key's document normal form: the load reported
    that collision (PC311) at this very key, and one mistake gets one diagnostic."""
    return normal_key(kind, key) in written


def compile_document(
    doc: PolicyDocument,
    index: LocationIndex,
    catalog: Catalog,
    root: str = "<policy>",
    files: Sequence[str] = (),
) -> CompiledPolicy:
    """Compile or raise `PolicyError` with every error found (warnings ride along)."""
    c = _Compiler(doc, index, catalog)
    global_tools = c.tools_scope(doc.tools, ("tools",), "tools", None)
    defaults = doc.agents.defaults if doc.agents else None
    defaults_tools = (
        c.tools_scope(
            defaults.tools, ("agents", "defaults", "tools"), "agents.defaults.tools", "defaults"
        )
        if defaults and defaults.tools
        else None
    )
    agents = c.agents()
    channels = c.channels()
    declared = c.declared_tools()
    session = doc.session
    main_key = session.main_key if session else None
    own_kind = own_session_kind(main_key) if main_key else None
    if own_kind is not None:
        c.problems.append(
            Diagnostic.make(
                "PC362",
                f'session.mainKey "{main_key}" is a {own_kind} session key: that session '
                "has its own key and is never the main session",
                index.value(("session", "mainKey")),
                "session.mainKey",
                'use a plain key such as "main"',
            )
        )
    errors = [d for d in c.problems if d.severity is Severity.ERROR]
    if errors:
        # an alsoAllow list is read twice (profile layer, and its own scope): report it once
        raise PolicyError(list(dict.fromkeys(c.problems)))
    assembler = Assembler(catalog, global_tools, c.calls)
    # An agent without an entry (or a run with no agent) falls back to agents.defaults.tools;
    # an agent whose entry has no `tools` has no agent scope at all.
    bare = assembler.build(None)
    layers: dict[str | None, ScopeLayers] = {
        None: assembler.build(defaults_tools) if defaults_tools is not None else bare
    }
    for aid, agent in agents.items():
        layers[aid] = assembler.build(agent.tools) if agent.tools is not None else bare
    memory = tuple(
        dict.fromkeys(
            n for n in (normalize(t, catalog.aliases) for t in catalog.memory_flush_tools) if n
        )
    )
    return CompiledPolicy(
        catalog=catalog,
        root=root,
        files=tuple(files) or (root,),
        global_tools=global_tools,
        defaults_tools=defaults_tools,
        agents=frozen(agents),
        channels=frozen(channels),
        default_sandbox_mode=(
            defaults.sandbox.mode
            if defaults and defaults.sandbox and defaults.sandbox.mode
            else "off"
        ),
        max_spawn_depth=(
            defaults.subagents.max_spawn_depth
            if defaults and defaults.subagents and defaults.subagents.max_spawn_depth
            else 1
        ),
        main_key=fold(session.main_key if session and session.main_key else "main"),
        session_scope=(session.scope if session and session.scope else "per-sender"),
        declared_tools=declared,
        diagnostics=tuple(sorted(dict.fromkeys(c.problems), key=Diagnostic.sort_key)),
        layers=frozen(layers),
        memory_flush=memory,
        default_inventory=Inventory.build([*core_tools(catalog), *declared], catalog),
        has_call_rules=c.calls.used,
        declared_parameters=_declared_parameters(doc),
        commands=_commands(doc, index),
    )


def _declared_parameters(doc: PolicyDocument) -> Mapping[str, Mapping[str, Any]]:
    """Declared plugin tools whose parameters the inventory gives (folded tool names)."""
    plugins = doc.inventory.plugins if doc.inventory is not None else None
    found = {fold(p.name): p.parameters for p in plugins or () if p.parameters is not None}
    return MappingProxyType(found)


def _commands(doc: PolicyDocument, index: LocationIndex) -> CommandCatalog | None:
    """The shipped command catalog with the policy's `commands` entries, each keeping where
    it was written (explain names it)."""
    if not doc.commands:
        return None
    rows = {name: row.model_dump(exclude_defaults=True) for name, row in doc.commands.items()}
    sources = {}
    for name in rows:
        where = index.key(("commands", name))
        sources[name] = str(where) if where is not None else "<policy>"
    return builtin_commands().with_entries(rows, sources)


def relative_catalog_dir(index: LocationIndex, root: str) -> Path:
    where = index.value(("catalog",))
    base = where.file if where and not where.file.startswith("<") else root
    return Path(base).parent
