"""Gemini CLI policy-engine TOML (`[[rule]]` tables) -> translated call permissions.

Each rule (tool names, an optional MCP server, a command prefix or regex or an arguments
regex, a decision, a priority, modes) becomes entries of the list its decision names
(`ask_user` is `ask`). What differs, and how the import handles it:

- Priorities: Gemini CLI lets the highest-priority matching rule decide; policyctl lets the
  most restrictive decide. `gemini_effects` lists every pair of rules whose order decided a
  call that the import now decides the other way (PC126), with both locations.
- Regexes: see `gemini_regex` (exact for literal prefixes; otherwise approximated towards
  refusing, never towards admitting). An `argsPattern` on a tool other than the shell is
  imported, for deny and ask, as every call of the tool (`tool(*)`), and left out for allow.
- Modes: the rules of the default mode are imported (a rule listing `modes` without
  `default` is left out, PC129); `interactive = false` rules (headless only) are left out;
  `subagent`, `toolAnnotations` and rules with a safety checker are not imported (PC125),
  except that a deny or ask rule carrying them is imported for every call (wider).
- Tools: Gemini CLI's built-in tools map to catalog tools by what they do; the others are
  reported. MCP tools (`mcpName`, `mcp_server_tool`, `server__tool`) are `server__tool`.
- What a call no rule settles gets is Gemini CLI's default policy: its read-only tools are
  allowed, the others ask.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..callrules import ArgumentKind, ArgumentSpec, Effect, SpecifierError, compile_rule
from ..callrules.model import KEYED_ONLY
from ..diagnostics import Source, did_you_mean
from ..located import LocMap, LocSeq
from ..names import fold, mcp_tool_name
from .calls import CallImport, Origin, finding
from .gemini_regex import (
    MAX_REGEX_DEPTH,
    MAX_REGEX_LENGTH,
    Patterns,
    argument_prefix,
    command_prefix,
    command_regex,
    regex_too_large,
)

SOURCE = "Gemini CLI"
_DECISIONS = {"allow": "allow", "deny": "deny", "ask_user": "ask"}
_EFFECT = {"deny": Effect.DENY, "ask": Effect.ASK, "allow": Effect.ALLOW}
_KEYS = frozenset(
    {
        *("toolName", "mcpName", "subagent", "argsPattern", "commandPrefix", "commandRegex"),
        *("decision", "priority", "modes", "toolAnnotations", "interactive", "safety_checker"),
        *("allowRedirection", "allow_redirection", "denyMessage", "deny_message"),
    }
)
_MODES = ("default", "autoEdit", "plan", "yolo")
#: Gemini CLI tools by what they do -> the catalog tools that do it (first present wins)
_ROLES: dict[str, tuple[str, ...]] = {
    "read_file": ("@read",),
    "write_file": ("@write",),
    "replace": ("edit", "edit_file"),
    "list_directory": ("ls", "list_dir"),
    "glob": ("find_files",),
    "grep_search": ("grep",),
    "search_file_content": ("grep",),
    "google_web_search": ("web_search",),
    "web_fetch": ("@url",),
    "run_shell_command": ("@shell",),
}
#: Gemini CLI's default policy: these are allowed when no rule settles a call, others ask
_READ_ONLY = ("read_file", "list_directory", "glob", "grep_search", "google_web_search")
_KNOWN_ELSEWHERE = frozenset(
    {
        *("read_many_files", "save_memory", "write_todos", "activate_skill", "ask_user"),
        *("enter_plan_mode", "exit_plan_mode", "codebase_investigator", "cli_help"),
        *("get_internal_docs", "complete_task", "update_topic", "visualize"),
    }
)


@dataclass
class GeminiRule:
    """One imported rule, for the effect analysis: its entries and where it was written."""

    index: int
    source: Source | None
    effect: str
    priority: int
    entries: list[str] = field(default_factory=list)


class _Gemini:
    def __init__(self, name: str, catalog: Any) -> None:
        self.name = name
        self.catalog = catalog
        self.imp = CallImport(SOURCE)
        self.rules: list[GeminiRule] = []
        kinds = {t.id: t.argument_kind for t in catalog.tools}
        self.by_role: dict[str, list[str]] = {}
        for gemini, candidates in _ROLES.items():
            found: list[str] = []
            for c in candidates:
                if c == "@read" and catalog.call_read_tool:
                    found = [catalog.call_read_tool]
                elif c == "@write" and catalog.call_write_tool:
                    found = [catalog.call_write_tool]
                elif c in ("@url", "@shell"):
                    found = [t for t, k in kinds.items() if k == c[1:]]
                elif c in catalog.tool_ids:
                    found = [c]
                if found:
                    break
            self.by_role[gemini] = found

    def find(self, code: str, message: str, src: Source | None, fix: str | None = None) -> None:
        self.imp.findings.append(finding(code, message, src, fix))

    def spec_for(self, tool: str) -> ArgumentSpec | None:
        row = self.catalog.by_id.get(tool)
        if row is None:
            return KEYED_ONLY if "__" in tool else None  # MCP tools: name(key=glob) only
        if row.argument_kind is None:
            return None
        return ArgumentSpec(ArgumentKind(row.argument_kind), row.argument_key, row.cwd_key)

    def add(self, rule: GeminiRule, entry: str, origin: Origin) -> None:
        if "(" in entry and not entry.endswith("(*)"):
            tool = entry.split("(", 1)[0]
            spec = self.spec_for(tool)
            try:
                if spec is None:
                    raise ValueError("the tool takes no call rules of this form")
                compile_rule(entry, _EFFECT[rule.effect], spec)
            except (SpecifierError, ValueError) as exc:
                why = exc.problem.message if isinstance(exc, SpecifierError) else str(exc)
                self.find(
                    "PC125", f"rule #{rule.index + 1} cannot become {entry}: {why}", rule.source
                )
                return
        rule.entries.append(entry)
        self.imp.add(rule.effect, entry, origin)  # type: ignore[arg-type]

    def keyed_allow(self, record: GeminiRule, tools: list[str], args: str, origin: Origin) -> bool:
        """An allow of MCP tools limited by `"key":"prefix` -> `tool(key="prefix*")`."""
        found = argument_prefix(args)
        if found is None or not all("__" in t and "*" not in t for t in tools):
            return False
        key, glob = found
        value = glob.replace("\\", "\\\\").replace('"', '\\"')
        self.find(
            "PC127",
            f"rule #{record.index + 1} (allow): argsPattern {args!r} imported as {key}={glob} on "
            "the top-level argument only, which admits fewer calls",
            record.source,
        )
        for tool in tools:
            self.add(record, f'{tool}({key}="{value}")', origin)
        return True

    def defaults(self) -> None:
        for gemini, tools in self.by_role.items():
            for tool in tools:
                self.imp.defaults.setdefault(tool, "allow" if gemini in _READ_ONLY else "ask")
        # MCP tools (or whole servers) the rules name, except those only ever denied
        for e in self.imp.entries:
            if ("__" in e.tool or e.tool == "bundle-mcp") and (e.effect != "deny" or not e.plain):
                self.imp.defaults.setdefault(e.tool, "ask")

    # -- one rule ----------------------------------------------------------------------------

    def tools(self, rule: LocMap, at: Source | None, index: int) -> list[str] | None:
        """The rule's tools as policyctl names (None: reported, not imported)."""
        raw = rule.get("toolName")
        names = [raw] if isinstance(raw, str) else list(raw) if raw is not None else []
        server = rule.get("mcpName")
        if server is not None:
            if server == "*":
                tools = [f"*__{fold(t)}" for t in names if t != "*"] or ["bundle-mcp"]
            else:
                prefix = mcp_tool_name(server, "x").rsplit("__", 1)[0]
                tools = [f"{prefix}__*" if t == "*" else mcp_tool_name(server, t) for t in names]
                tools = tools or [f"{prefix}__*"]
                listed = self.imp.mcp_servers.setdefault(str(server), [])
                listed.extend(t for t in names if t != "*" and "*" not in t and t not in listed)
            return [fold(t) for t in tools]
        if not names:
            return ["*"]
        out: list[str] = []
        for name in names:
            # an unknown name is reported on its own; the rule still holds for the others
            out.extend(self.tool(name, at, index) or [])
        return out or None

    def tool(self, name: str, at: Source | None, index: int) -> list[str] | None:
        if name == "*":
            return ["*"]
        if name.startswith("mcp_"):
            rest = name[4:]
            if rest == "*":
                return ["bundle-mcp"]
            server, _, tool = rest.partition("_")
            if not server or not tool:
                self.find("PC125", f'rule #{index + 1}: "{name}" names no MCP tool', at)
                return None
            if server == "*":
                return [fold(f"*__{tool}")]
            prefix = mcp_tool_name(server, "x").rsplit("__", 1)[0]
            if "*" not in tool:
                listed = self.imp.mcp_servers.setdefault(server, [])
                if tool not in listed:
                    listed.append(tool)
            return [fold(f"{prefix}__{tool}" if "*" in tool else mcp_tool_name(server, tool))]
        if "__" in name:
            return [fold(name)]
        if name in self.by_role:
            if not self.by_role[name]:
                self.find(
                    "PC125",
                    f"rule #{index + 1}: catalog {self.catalog.name} has no tool that does "
                    f"what {name} does",
                    at,
                )
                return None
            return self.by_role[name]
        if name in _KNOWN_ELSEWHERE:
            self.find("PC125", f"rule #{index + 1}: {name} has no equivalent in policyctl", at)
        else:
            hint = did_you_mean(name, [*_ROLES, *_KNOWN_ELSEWHERE])
            self.find(
                "PC125",
                f'rule #{index + 1}: "{name}" is not a Gemini CLI tool',
                at,
                hint and f"{hint}?",
            )
        return None

    def rule(self, rule: Any, index: int, at: Source | None) -> None:
        label = f"rule #{index + 1}"
        if not isinstance(rule, LocMap):
            self.find("PC128", f"{label} must be a table", at)
            return
        src = rule.src or at
        for key in rule:
            if key not in _KEYS:
                hint = did_you_mean(key, _KEYS)
                self.find(
                    "PC125",
                    f"{label}: {key} is not a rule field (Gemini CLI ignores it too)",
                    rule.key_src.get(key, src),
                    hint and f"{hint}?",
                )
        problems = _problems(rule)
        for key, why in problems:
            self.find("PC128", f"{label}: {key} {why}", rule.val_src.get(key, src))
        if problems:
            return
        decision, priority = rule["decision"], rule["priority"]
        modes = rule.get("modes", [])
        prefix = rule.get("commandPrefix")
        prefixes = [prefix] if isinstance(prefix, str) else prefix
        effect = _DECISIONS[decision]
        if modes and "default" not in modes:
            self.find(
                "PC129",
                f"{label} applies only in {', '.join(modes)} mode: not imported (the default "
                "mode's rules are)",
                src,
            )
            return
        if rule.get("interactive") is False:
            self.find("PC129", f"{label} applies only to headless runs: not imported", src)
            return
        tools = self.tools(rule, src, index)
        if tools is None:
            return
        record = GeminiRule(index, src, effect, priority)
        self.rules.append(record)
        origin = Origin(src, f"rule #{index + 1} ({decision}, priority {priority})")
        self.conditions(rule, record, tools, origin, prefixes)

    def too_large(self, rule: LocMap, record: GeminiRule, tools: list[str], origin: Origin) -> bool:
        """A regex beyond what is read (`regex_too_large`) is reported where it is written and
        imported towards refusing: a deny or ask rule as every call of its tools, an allow
        rule not at all. True when the rule is settled so."""
        label, effect = f"rule #{record.index + 1}", record.effect
        for key in ("commandRegex", "argsPattern"):
            text = rule.get(key)
            why = None if text is None else regex_too_large(str(text))
            if why is None:
                continue
            where = rule.val_src.get(key, record.source)
            if effect == "allow":
                self.find(
                    "PC150",
                    f"{label} (allow): its {key} is too large to read ({why}): not imported, "
                    "so the calls it admitted get what the other rules say",
                    where,
                    _regex_bounds_fix(),
                )
                return True
            self.find(
                "PC150",
                f"{label} ({effect}): its {key} is too large to read ({why}): imported as "
                f"every call of {', '.join(tools)}, which {_more(effect)} calls",
                where,
                _regex_bounds_fix(),
            )
            for tool in tools:
                self.add(record, f"{tool}(*)", origin)
            return True
        return False

    def conditions(
        self, rule: LocMap, record: GeminiRule, tools: list[str], origin: Origin, prefixes: Any
    ) -> None:
        label, src, effect = f"rule #{record.index + 1}", record.source, record.effect
        if rule.get("denyMessage") or rule.get("deny_message"):
            self.find("PC129", f"{label}: its denyMessage is not kept", src)
        if rule.get("allowRedirection") or rule.get("allow_redirection"):
            self.find(
                "PC129",
                f"{label}: allowRedirection: policyctl decides a redirection as a call of the "
                "write (or read) tool on its target",
                src,
            )
        if self.too_large(rule, record, tools, origin):
            return
        limited = [k for k in ("subagent", "toolAnnotations", "safety_checker") if k in rule]
        shell_tools = self.by_role["run_shell_command"]
        args = rule.get("argsPattern")
        patterns: Patterns | None = None
        if prefixes is not None:
            found = [command_prefix(p) for p in prefixes]
            words = tuple(w for f in found for w in f.words)
            patterns = Patterns(
                words, all(f.exact for f in found), cut=next((f.cut for f in found if f.cut), None)
            )
        elif "commandRegex" in rule:
            patterns = command_regex(str(rule["commandRegex"]))
        elif args is not None and set(tools) <= set(shell_tools) and args.startswith('"command":"'):
            patterns = command_regex(args[len('"command":"') :])
        keyed = args is not None and patterns is None and not limited and effect == "allow"
        if keyed and self.keyed_allow(record, tools, str(args), origin):
            return
        opaque = (args is not None and patterns is None) or bool(limited)
        if opaque:
            why = (
                f"argsPattern {args!r}"
                if args is not None and not limited
                else " and ".join(limited)
            )
            if effect == "allow" or any("*" in t or t == "bundle-mcp" for t in tools):
                self.find(
                    "PC125",
                    f"{label} ({effect}) is limited by {why}, which policyctl cannot express: "
                    "not imported; the calls it "
                    + (
                        "admitted are decided by the other rules"
                        if effect == "allow"
                        else "covered are not refused by it"
                    ),
                    src,
                )
                return
            self.find(
                "PC127",
                f"{label} ({effect}) is limited by {why}, which policyctl cannot express: "
                f"imported as every call of {', '.join(tools)}",
                src,
            )
            for tool in tools:
                self.add(record, f"{tool}(*)", origin)
            return
        if patterns is None:
            for tool in tools:
                self.add(record, tool, origin)
            return
        if patterns.never:
            self.find(
                "PC129",
                f"{label}: the regex is anchored with ^ or $, which Gemini CLI applies to the "
                "whole JSON text of the arguments, so it never matches: not imported",
                src,
            )
            return
        if not patterns.exact:
            if effect == "allow":
                self.find(
                    "PC125",
                    f"{label} (allow): {patterns.cut!r} is not a literal command prefix: not "
                    "imported, so the commands it admitted get what the other rules say",
                    src,
                )
                return
            self.find(
                "PC127",
                f"{label} ({effect}): {patterns.cut!r} is not a literal command prefix: "
                f"imported as {', '.join(patterns.words)}, which {_more(effect)} commands",
                src,
            )
        for tool in tools:
            for pattern in patterns.words:
                self.add(record, f"{tool}({pattern})", origin)


def _regex_bounds_fix() -> str:
    return (
        "write the command as commandPrefix, or a regex of at most "
        f"{MAX_REGEX_LENGTH} characters and {MAX_REGEX_DEPTH} nested groups"
    )


def _strings(value: Any) -> bool:
    """A string, or a list of strings (toolName, commandPrefix)."""
    return isinstance(value, str) or (
        isinstance(value, list) and all(isinstance(v, str) for v in value)
    )


def _problems(rule: LocMap) -> list[tuple[str, str]]:
    """What makes a rule malformed, as (key, why): what Gemini CLI's own loader refuses."""
    out: list[tuple[str, str]] = []
    decision, priority = rule.get("decision"), rule.get("priority")
    if not isinstance(decision, str) or decision not in _DECISIONS:
        out.append(("decision", 'must be "allow", "deny" or "ask_user"'))
    if isinstance(priority, bool) or not isinstance(priority, int) or not 0 <= priority <= 999:
        out.append(("priority", "must be an integer from 0 to 999"))
    for key in ("toolName", "commandPrefix"):
        if key in rule and not _strings(rule[key]):
            out.append((key, "must be a string or a list of strings"))
    for key in ("mcpName", "argsPattern", "commandRegex", "subagent"):
        if key in rule and not isinstance(rule[key], str):
            out.append((key, "must be a string"))
    modes = rule.get("modes", [])
    if not isinstance(modes, list) or any(m not in _MODES for m in modes):
        out.append(("modes", f"must be a list of {', '.join(_MODES)}"))
    if "interactive" in rule and not isinstance(rule["interactive"], bool):
        out.append(("interactive", "must be true or false"))
    shellish = [k for k in ("commandPrefix", "commandRegex") if k in rule]
    if shellish and rule.get("toolName") != "run_shell_command":
        out.append((shellish[0], 'needs toolName = "run_shell_command" (one name)'))
    if len(shellish) == 2 or (shellish and "argsPattern" in rule):
        out.append((shellish[0], "commandPrefix, commandRegex and argsPattern exclude each other"))
    return out


def _more(effect: str) -> str:
    return "refuses more" if effect == "deny" else "asks for more"


def import_gemini(document: LocMap, name: str, catalog: Any) -> CallImport:
    """A parsed, located policy TOML -> translated rules, findings and changed effects."""
    from .gemini_effects import changed_effects

    g = _Gemini(name, catalog)
    for key in document:
        if key not in ("rule", "safety_checker"):
            g.find(
                "PC125",
                f"{key} is not a section of a Gemini CLI policy file",
                document.key_src.get(key),
            )
    if "safety_checker" in document:
        g.find(
            "PC125",
            "[[safety_checker]] tables are not imported: the calls their checkers refused are "
            "decided by the rules alone",
            document.key_src.get("safety_checker"),
        )
    rules = document.get("rule")
    if rules is None:
        g.find("PC128", "no [[rule]] tables: nothing to import", Source(name, 1, 1))
        return g.imp
    if not isinstance(rules, LocSeq):
        g.find("PC128", "rule must be an array of tables ([[rule]])", document.val_src.get("rule"))
        return g.imp
    for i, rule in enumerate(rules):
        g.rule(rule, i, rules.item_src[i] if i < len(rules.item_src) else None)
    g.defaults()
    g.imp.note_unlisted_servers()
    g.imp.findings.extend(changed_effects(g.rules, catalog))
    return g.imp
