"""Translated call permissions -> one policyctl scope (`tools:`), whatever the source format.

The sources (Claude Code, Gemini CLI) offer every tool they have and settle each call by
their rules, asking when no rule settles it; policyctl's `allow` list is an allowlist of
names. So the document admits, by name, exactly the tools the source has (`defaults`: the
catalog tools it has an equivalent of, with what it does with a call no rule settles), and
decides their calls by the translated rules:

- a plain-name deny removes the tool;
- a tool with allow specifiers keeps them, and a call none of them matches gets the scope's
  `callDefault` (ask, or deny where the source refuses unsettled calls);
- a tool with no allow entry is admitted by its plain name when the source lets its calls
  through, and admitted *and* put in `ask` when the source asks for them;
- a tool the source does not have is not admitted; a tool the catalog would grant through an
  admitted one (`write` grants `apply_patch`) is denied by name, so it is not let in unasked.

An allow list that holds call rules only does not restrict names (contract 3); when every
allow entry is a call rule, the admitted names are listed at the agent layer instead
(`agents.defaults.tools.allow`, which every run of the document gets).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..diagnostics import Diagnostic, Source
from ..escape import printable_line

Effect = Literal["allow", "ask", "deny"]
EFFECTS: tuple[Effect, ...] = ("deny", "ask", "allow")
#: how long a quoted source text may be in a comment (the rest is cut, marked with ...)
QUOTE_MAX = 100


def finding(code: str, message: str, source: Source | None, fix: str | None = None) -> Diagnostic:
    """An import finding. The source line is never quoted: settings files hold credentials
    (Claude Code's `env`, `apiKeyHelper`), and a finding must not print them."""
    return replace(Diagnostic.make(code, message, source, fix=fix), quote=False)


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a translated entry came from: a location in the source file, or the source's
    built-in behaviour (`source` None, `text` says which)."""

    source: Source | None
    text: str

    def describe(self) -> str:
        text = self.text if len(self.text) <= QUOTE_MAX else self.text[: QUOTE_MAX - 3] + "..."
        where = f"{self.source.line}:{self.source.column} " if self.source else ""
        return printable_line(f"{where}{text}")


@dataclass(frozen=True, slots=True)
class Translated:
    effect: Effect
    #: the policyctl entry: a tool name or glob (`exec`, `github__*`) or `tool(specifier)`
    entry: str
    origin: Origin

    @property
    def tool(self) -> str:
        return self.entry.split("(", 1)[0]

    @property
    def plain(self) -> bool:
        return "(" not in self.entry


@dataclass
class CallImport:
    """What a source importer hands to `build_document`."""

    #: "Claude Code", "Gemini CLI": named in the remarks
    source_name: str
    entries: list[Translated] = field(default_factory=list)
    #: catalog tool -> what the source does with a call of it no rule settles
    defaults: dict[str, Literal["allow", "ask"]] = field(default_factory=dict)
    call_default: Literal["ask", "deny"] = "ask"
    findings: list[Diagnostic] = field(default_factory=list)
    #: MCP server -> the tools entries name (inventory stubs, so the names resolve)
    mcp_servers: dict[str, list[str]] = field(default_factory=dict)

    def add(self, effect: Effect, entry: str, origin: Origin) -> None:
        self.entries.append(Translated(effect, entry, origin))

    def note_unlisted_servers(self) -> None:
        """An MCP server only ever named by a glob gets a stub with no tools: say so."""
        for server, tools in self.mcp_servers.items():
            if not tools:
                self.findings.append(
                    finding(
                        "PC129",
                        f"inventory.mcp.{printable_line(server)}: no rule names one of its "
                        "tools; list them there so its entries resolve",
                        None,
                    )
                )


@dataclass
class Built:
    document: dict[str, Any]
    #: (list key, entry) -> the comment written beside that entry
    remarks: dict[tuple[str, str], str]
    #: (list key, entry) -> where the entry came from
    origins: dict[tuple[str, str], list[Origin]] = field(default_factory=dict)

    def drop(self, key: str, entry: str) -> list[Origin]:
        """Take `entry` out of `tools.<key>` (a later check refused it); its origins."""
        tools = self.document["tools"]
        tools[key] = [e for e in tools.get(key, []) if e != entry]
        if not tools[key]:
            del tools[key]
        self.remarks.pop((key, entry), None)
        return self.origins.pop((key, entry), [])


def build_document(
    imp: CallImport, catalog_name: str, grants: Mapping[str, Iterable[str]]
) -> Built:
    """`grants`: granted tool -> the tools whose admission grants it (the catalog's grants)."""
    lists: dict[Effect, dict[str, list[Origin]]] = {e: {} for e in EFFECTS}

    def emit(effect: Effect, entry: str, origin: Origin) -> None:
        origins = lists[effect].setdefault(entry, [])
        if origin not in origins:
            origins.append(origin)

    by_tool: dict[str, list[Translated]] = {}
    for t in imp.entries:
        by_tool.setdefault(t.tool, []).append(t)
    for tool in imp.defaults:
        by_tool.setdefault(tool, [])
    admitted: set[str] = set()
    for tool, entries in by_tool.items():
        plain = {e: [t for t in entries if t.effect == e and t.plain] for e in EFFECTS}
        specs = {e: [t for t in entries if t.effect == e and not t.plain] for e in EFFECTS}
        if plain["deny"]:
            for t in plain["deny"]:
                emit("deny", t.entry, t.origin)
            continue  # removed by name: its call rules could never apply
        for effect in ("deny", "ask"):
            for t in plain[effect] + specs[effect]:
                emit(effect, t.entry, t.origin)
        default = imp.defaults.get(tool)
        if plain["allow"] or specs["allow"]:
            for t in plain["allow"] + specs["allow"]:
                emit("allow", t.entry, t.origin)
            if default == "allow" and not plain["allow"]:
                # calls no allow specifier matches go through in the source: not callDefault
                emit("allow", tool, _builtin(imp, "lets calls no rule settles through"))
            admitted.add(tool)
        elif default is not None:
            emit("allow", tool, _builtin(imp, "has this tool"))
            if default == "ask" and not plain["ask"]:
                emit("ask", tool, _builtin(imp, "asks before calls no rule settles"))
            admitted.add(tool)
    for granted, sources in grants.items():
        if granted not in admitted and granted not in lists["deny"]:
            through = [s for s in sources if s in admitted]
            if through:
                emit(
                    "deny",
                    granted,
                    Origin(
                        None,
                        f"{imp.source_name} has no {granted}; the catalog would grant it "
                        f"through {through[0]}",
                    ),
                )
    if not admitted:
        emit("deny", "*", Origin(None, f"{imp.source_name} leaves no tool admitted"))
    tools: dict[str, Any] = {}
    remarks: dict[tuple[str, str], str] = {}
    where: dict[tuple[str, str], list[Origin]] = {}
    for effect in EFFECTS:
        if lists[effect]:
            tools[effect] = list(lists[effect])
            for entry, origins in lists[effect].items():
                remarks[(effect, entry)] = "; ".join(o.describe() for o in origins)
                where[(effect, entry)] = origins
    if any(not t.plain for t in imp.entries if t.effect == "allow") or imp.call_default == "deny":
        tools["callDefault"] = imp.call_default
    document: dict[str, Any] = {"catalog": catalog_name, "tools": tools}
    if lists["allow"] and all("(" in entry for entry in lists["allow"]):
        # an allow list of call rules alone restricts calls, not names: the names the source
        # has are said at the agent layer (every run of this document: it has no agents)
        names = sorted(admitted)
        document["agents"] = {"defaults": {"tools": {"allow": names}}}
        for name in names:
            remarks[("allow", name)] = (
                f"the tools {imp.source_name} admits (call rules alone do not restrict names)"
            )
    if imp.mcp_servers:
        document["inventory"] = {
            "mcp": {server: {"tools": names} for server, names in imp.mcp_servers.items()}
        }
    return Built(document, remarks, where)


def _builtin(imp: CallImport, what: str) -> Origin:
    return Origin(None, f"{imp.source_name} {what}")


def grant_map(catalog: Any) -> dict[str, list[str]]:
    """The catalog's grants as granted tool -> the tools whose admission grants it."""
    return {
        tool: [grant.when_allowed for grant in grants] for tool, grants in catalog.grants.items()
    }
