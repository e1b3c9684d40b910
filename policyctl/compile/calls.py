"""Compile, call rules: a scope's `tool(specifier)` entries, `ask` and `callDefault` -> frozen
`ScopeCalls` inside the scope's `LayerPolicy` (contract: shared/spec/call-rules.md).

Each specifier is parsed here, once, for its tool's argument kind (catalog data); one that does
not parse is an error at the file:line:col of the bad character inside the entry. Per scope,
the rules are grouped by tool into `ToolCallRules` (deny, ask and allow rules with their
sources, the plain-name `ask`, `callDefault`), so a resolve only picks the tools its run has.

The call-rule core (`policyctl.callrules`, which loads the shell parser) is imported only when a
document has call rules: a policy without them costs nothing more to load.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

from ..catalog.model import Catalog
from ..diagnostics import Diagnostic, Source
from ..names import GROUP_PREFIX, ascii_problem, normalize
from .entries import EntryList

if TYPE_CHECKING:
    from ..callrules.model import ArgumentSpec, Effect, Matcher, Rule, ToolCallRules
    from ..callrules.values import Part
    from ..catalog.inventory import Inventory

ListName = Literal["allow", "deny", "ask"]


def is_call_rule(text: str) -> bool:
    """Whether an entry is written as a call rule (or a broken one: a stray parenthesis)."""
    return "(" in text or ")" in text


@dataclass(frozen=True, slots=True)
class CallLists:
    """One scope's call rules as written, per list; None where the list has none.

    The sandbox layer picks these field by field (agent -> global), like its names."""

    deny: tuple[Rule, ...] | None = None
    ask: tuple[Rule, ...] | None = None
    allow: tuple[Rule, ...] | None = None
    #: the plain names (and groups, globs) of `ask`: every call of those tools asks
    plain_ask: EntryList | None = None
    #: the plain entries of an `allow` that also holds specifiers: whether a tool that has
    #: allow rules is also admitted by name (then an unmatched call is allowed)
    plain_allow: EntryList | None = None
    call_default: Effect | None = None
    call_default_source: Source | None = None

    @property
    def empty(self) -> bool:
        return (
            self.deny is None
            and self.ask is None
            and self.allow is None
            and (self.plain_ask is None or self.plain_ask.empty)
        )


@dataclass(frozen=True, slots=True)
class ScopeCalls:
    """The call rules one layer policy applies, per tool, built at compile time.

    `tools` holds every tool a specifier or a literal plain `ask` names. `plain_ask` is kept
    for what only the run's inventory can expand (globs, `*`, plugin ids)."""

    tools: Mapping[str, ToolCallRules]
    plain_ask: EntryList | None
    specs: Mapping[str, ArgumentSpec] = field(repr=False)

    def for_run(self, allowed: frozenset[str], inventory: Inventory) -> dict[str, ToolCallRules]:
        """This scope's rules for the tools a run has."""
        out = {tool: rules for tool, rules in self.tools.items() if tool in allowed}
        ask = self.plain_ask
        if ask is None or not _expands_at_run(ask, inventory):
            return out
        from ..callrules.model import KEYED_ONLY, ToolCallRules

        for tool in inventory.tools:
            if tool.name not in allowed:
                continue
            rules = out.get(tool.name)
            if rules is not None and rules.plain_ask is not None:
                continue
            hit = ask.match(tool.name, tool.plugin_id)
            if hit is None:
                continue
            if rules is None:
                spec = self.specs.get(tool.name, KEYED_ONLY)
                rules = ToolCallRules(tool.name, spec)
            out[tool.name] = replace(
                rules, plain_ask=hit.entry.raw.strip(), plain_ask_source=hit.entry.source
            )
        return out


def _expands_at_run(ask: EntryList, inventory: Inventory) -> bool:
    if ask.wildcard is not None or ask.globs or ask.all_plugins is not None:
        return True
    return bool(ask.plugin_ids) and any(t.plugin_id for t in inventory.tools)


class CallCompiler:
    """Parses `tool(specifier)` entries for one catalog; reports problems into `problems`."""

    def __init__(self, catalog: Catalog, problems: list[Diagnostic]) -> None:
        self.catalog = catalog
        self.problems = problems
        self._specs: Mapping[str, ArgumentSpec] | None = None
        #: whether some scope has call rules (`CompiledPolicy.has_call_rules`)
        self.used = False

    @property
    def specs(self) -> Mapping[str, ArgumentSpec]:
        """The catalog's argument kinds, read on first use (a policy without call rules never
        loads the call-rule core)."""
        if self._specs is None:
            from ..callrules.model import ArgumentKind, ArgumentSpec

            self._specs = MappingProxyType(
                {
                    t.id: ArgumentSpec(ArgumentKind(t.argument_kind), t.argument_key, t.cwd_key)
                    for t in self.catalog.tools
                    if t.argument_kind is not None
                }
            )
        return self._specs

    def rules(
        self, text: str, effect_name: ListName, source: Source | None, path: str
    ) -> tuple[str, tuple[Rule, ...]] | None:
        """The entry's tool and its compiled rules (one per tool a cover names), or None
        after reporting why the entry is refused."""
        from ..callrules.diagnose import to_diagnostic
        from ..callrules.model import KEYED_ONLY, Effect, Rule, SpecifierError, SpecifierProblem
        from ..callrules.specifiers import compile_matcher, split_entry

        effect = Effect[effect_name.upper()]
        try:
            split_entry(text)
            tool = normalize(text[: text.find("(")], self.catalog.aliases)
            lead = len(text) - len(text.lstrip())
            why = _not_one_tool(tool)
            if why is not None:
                raise SpecifierError(
                    SpecifierProblem(
                        "PC357",
                        why,
                        text,
                        lead,
                        "write one entry per tool, e.g. read(...) and write(...)",
                    )
                )
            bad = ascii_problem(tool)
            if bad is not None:
                raise SpecifierError(
                    SpecifierProblem("PC301", f"tool name: {bad}", text, lead, "retype in ASCII")
                )
            hidden = _hidden_character(text)
            if hidden is not None:
                offset, label = hidden
                raise SpecifierError(
                    SpecifierProblem(
                        "PC301",
                        f"character {label} would make the rule match other text than it shows",
                        text,
                        offset,
                        "retype the entry without it",
                    )
                )
            near = self._misspelt(tool, text)
            if near is not None:
                raise SpecifierError(
                    SpecifierProblem(
                        "PC438",
                        f'"{tool}" is no tool of the catalog, so this rule could never match; '
                        f'did you mean "{near}"?',
                        text,
                        lead,
                        f"write {near}{text[text.find('(') :].strip()}",
                    )
                )
            members = self.catalog.covers.get(tool, (tool,))
            if any(self.specs.get(m, KEYED_ONLY).kind.value == "shell" for m in members):
                _check_command_word(text)
            entry = text.strip()
            built = tuple(
                Rule(
                    effect,
                    member,
                    entry,
                    compile_matcher(text, self.specs.get(member, KEYED_ONLY)),
                    source,
                )
                for member in members
            )
        except SpecifierError as exc:
            self.problems.append(to_diagnostic(exc.problem, source, path, _opening_quote(source)))
            return None
        return tool, built

    def _misspelt(self, tool: str, text: str) -> str | None:
        """The catalog tool a rule's unknown tool name is a typo of, for a specifier only a
        catalog tool's argument kind reads (`exce(rm *)`); a `name(key=glob)` rule may be
        meant for a plugin tool, which validate checks against the declared inventory."""
        from ..callrules.keyed import looks_keyed
        from ..diagnostics import did_you_mean

        catalog = self.catalog
        if tool in catalog.tool_ids or tool in catalog.covers or tool in self.specs:
            return None
        inner = text[text.find("(") + 1 : text.rstrip().rfind(")")].strip()
        if inner == "*" or looks_keyed(inner):
            return None
        return did_you_mean(tool, sorted(self.specs))

    def scope_calls(self, lists: CallLists) -> ScopeCalls | None:
        """Group one layer policy's rules by tool (None when it has no call rules)."""
        if lists.empty:
            return None
        from ..callrules.model import KEYED_ONLY, Effect, ToolCallRules

        per_tool: dict[str, dict[str, list[Rule]]] = {}
        for name, rules in (("deny", lists.deny), ("ask", lists.ask), ("allow", lists.allow)):
            for rule in rules or ():
                per_tool.setdefault(rule.tool, {}).setdefault(name, []).append(rule)
        ask = lists.plain_ask
        for tool in ask.names if ask is not None else ():
            per_tool.setdefault(tool, {})
        default = lists.call_default if lists.call_default is not None else Effect.DENY
        tools: dict[str, ToolCallRules] = {}
        for tool, by_list in per_tool.items():
            allow = tuple(by_list.get("allow", ()))
            admitted_by = _name_hit(lists.plain_allow, tool) if allow else None
            ask_hit = ask.names.get(tool) if ask is not None else None
            tools[tool] = ToolCallRules(
                tool,
                self.specs.get(tool, KEYED_ONLY),
                deny=tuple(by_list.get("deny", ())),
                ask=tuple(by_list.get("ask", ())),
                allow=allow,
                name_admitted=not allow or admitted_by is not None,
                name_entry=admitted_by[0] if admitted_by else None,
                name_source=admitted_by[1] if admitted_by else None,
                plain_ask=ask_hit.entry.raw.strip() if ask_hit is not None else None,
                plain_ask_source=ask_hit.entry.source if ask_hit is not None else None,
                call_default=default,
                call_default_source=lists.call_default_source,
            )
        self._granted(tools, lists)
        dynamic = ask if ask is not None and not ask.empty else None
        self.used = True
        return ScopeCalls(MappingProxyType(tools), dynamic, self.specs)

    def _granted(self, tools: dict[str, ToolCallRules], lists: CallLists) -> None:
        """A catalog grant (`write` admits `apply_patch`) from a tool admitted here by allow
        specifiers only must not admit the granted tool unrestricted. Where the catalog also
        relates the two (`[[relations]]`), the relation does it, with every rule of the
        grantor; otherwise the granted tool takes the grantor's allow rules, compiled for its
        own argument kind (no rules if they do not parse for it, so every call of it gets
        callDefault)."""
        from ..callrules.model import KEYED_ONLY, Rule, SpecifierError, ToolCallRules
        from ..callrules.specifiers import compile_matcher

        for granted, grants in self.catalog.grants.items():
            if _name_hit(lists.plain_allow, granted) is not None:
                continue
            own = tools.get(granted)
            if own is not None and own.allow:
                continue
            related = {r.acts_as for r in self.catalog.relations.get(granted, ())}
            for grant in grants:
                if grant.when_allowed in related:
                    # the relation makes each call of the granted tool a call of the grantor,
                    # decided by all of its rules at every layer (callrules.subject)
                    continue
                grantor = tools.get(grant.when_allowed)
                if grantor is None or not grantor.allow or grantor.name_admitted:
                    continue
                spec = self.specs.get(granted, KEYED_ONLY)
                derived: list[Rule] = []
                for rule in grantor.allow:
                    try:
                        matcher = compile_matcher(rule.entry, spec)
                    except SpecifierError:
                        continue
                    derived.append(Rule(rule.effect, granted, rule.entry, matcher, rule.source))
                if not derived:  # nothing carries over: every call gets callDefault
                    first = grantor.allow[0]
                    derived.append(
                        Rule(first.effect, granted, first.entry, _no_call(), first.source)
                    )
                base = (
                    own
                    if own is not None
                    else ToolCallRules(
                        granted,
                        spec,
                        call_default=grantor.call_default,
                        call_default_source=grantor.call_default_source,
                    )
                )
                tools[granted] = replace(
                    base,
                    allow=tuple(derived),
                    name_admitted=False,
                    call_default=grantor.call_default,
                    call_default_source=grantor.call_default_source,
                )
                break


@cache
def _no_call() -> Matcher:
    """One shared matcher (the class is made on first use: the core loads only when needed)."""
    from ..callrules.model import Matcher

    class NoCall(Matcher):
        """An allow rule that admits no call (a grant whose grantor's rules do not apply)."""

        __slots__ = ()

        def matches(self, part: Part, strict: bool) -> bool:
            return False

    return NoCall()


def _name_hit(plain: EntryList | None, tool: str) -> tuple[str, Source | None] | None:
    hit = plain.match(tool) if plain is not None else None
    return (hit.entry.raw.strip(), hit.entry.source) if hit is not None else None


def _not_one_tool(tool: str) -> str | None:
    if not tool:
        return "a call rule needs a tool name before ("
    if tool.startswith(GROUP_PREFIX):
        return f'"{tool}" is a group: a specifier applies to one tool'
    if "*" in tool:
        return f'"{tool}" is a glob: a specifier applies to one tool'
    if tool == "bundle-mcp":
        return '"bundle-mcp" is a plugin id: a specifier applies to one tool'
    return None


def _check_command_word(text: str) -> None:
    """A shell specifier's command word must be ASCII: `exec(rм *)` with a Cyrillic м looks
    like a rule about `rm` and never meets it (command words are matched literally)."""
    from ..callrules.model import SpecifierError, SpecifierProblem

    opening = text.find("(")
    inner = text[opening + 1 :]
    word = inner.lstrip().split(" ", 1)[0]
    start = opening + 1 + (len(inner) - len(inner.lstrip()))
    for i, ch in enumerate(word):
        if not ch.isascii():
            raise SpecifierError(
                SpecifierProblem(
                    "PC301",
                    f"command word has U+{ord(ch):04X} "
                    f"{unicodedata.name(ch, 'a non-ASCII character')}: a look-alike never "
                    "matches the command it shows",
                    text,
                    start + i,
                    "retype the command in ASCII",
                )
            )


def _hidden_character(text: str) -> tuple[int, str] | None:
    """A control or format character (zero-width, bidi) inside the entry, with its offset."""
    for i, ch in enumerate(text):
        if not ch.isprintable() or unicodedata.category(ch) == "Cf":
            return i, f"U+{ord(ch):04X} {unicodedata.name(ch, 'control character')}"
    return None


def _opening_quote(source: Source | None) -> int:
    """How many quote characters open the entry where it was written (the source points at
    the first of them), so a problem's column lands on the character itself. Read only on this
    error path, and only as a capped regular file (a bundle's recorded file names are data)."""
    if source is None or source.file.startswith("<"):
        return 0
    from pathlib import Path

    from ..formats.files import read_capped
    from ..settings import default_limits

    try:
        data = read_capped(Path(source.file), default_limits().max_file_bytes)
    except OSError:
        return 0
    lines = data.decode("utf-8", "replace").splitlines()
    if not 0 < source.line <= len(lines):
        return 0
    rest = lines[source.line - 1][source.column - 1 : source.column + 2]
    if rest[:3] in ('"""', "'''"):
        return 3
    return 1 if rest[:1] in ('"', "'") else 0
