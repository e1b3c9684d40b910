"""The data of call rules: effects, argument kinds, compiled rules, rule sets and decisions.

Everything here is frozen and built once: the engine can later hold one `LayerCallRules` per
layer inside the immutable compiled policy and share it across threads. A decision is never a
bare bool: it carries the layer, the entry, where the entry was written and the part of the
call (sub-command, path, URL) that decided.
"""

from __future__ import annotations

import heapq
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum, IntEnum
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from ..located import scope_list

if TYPE_CHECKING:
    from .values import Part


class Effect(IntEnum):
    """What a call gets. The order is the restriction order: the most restrictive is `max`."""

    ALLOW = 0
    ASK = 1
    DENY = 2

    @property
    def label(self) -> str:
        return self.name.lower()


class ArgumentKind(str, Enum):
    """How a tool's specifier is read: catalog data (`argument_kind` in profiles/*.toml)."""

    SHELL = "shell"  # a shell command line in `argument_key`
    PATH = "path"  # one file path in `argument_key`
    PATCH = "patch"  # the paths a patch (in `argument_key`) touches
    URL = "url"  # one URL in `argument_key`
    KEYED = "keyed"  # no declared kind: only `name(key=glob, ...)`


@dataclass(frozen=True, slots=True)
class ArgumentSpec:
    """A tool's argument kind and the argument that holds it (`cwd_key`: its working dir)."""

    kind: ArgumentKind
    key: str | None = None
    cwd_key: str | None = None


KEYED_ONLY = ArgumentSpec(ArgumentKind.KEYED)


@dataclass(frozen=True, slots=True)
class SpecifierProblem:
    """Why a specifier does not parse, and where: `offset` is 0-based inside the entry text.

    Compile turns (entry's own file:line:col, offset) into the file:line:col of the bad spot.
    """

    code: str
    message: str
    entry: str
    offset: int
    fix: str | None = None

    def __str__(self) -> str:
        return f"{self.code} {self.message} (at offset {self.offset} of {self.entry!r})"


class SpecifierError(ValueError):
    """Raised by the specifier parsers; `problem` has the code, text and offset."""

    def __init__(self, problem: SpecifierProblem) -> None:
        super().__init__(str(problem))
        self.problem = problem


class Matcher(ABC):
    """A compiled specifier: parse once, match many. Subclasses are frozen dataclasses.

    `matches(part, strict)` answers for one part of a call. `strict` is True for allow rules:
    a part with unknown words (an expansion, an unquoted glob) matches an allow only when every
    possible value would match; deny and ask rules match when some value could.
    """

    __slots__ = ()

    #: False for matchers that can only judge a part that was analysed (shell, path, URL).
    judges_unanalysable: bool = False
    #: a shell pattern's literal command word: rules are indexed by it
    first_word: str | None = None

    @abstractmethod
    def matches(self, part: Part, strict: bool) -> bool:
        """Whether this specifier meets `part` (see the class docstring for `strict`)."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One `tool(specifier)` entry of one list at one layer, compiled."""

    effect: Effect
    tool: str
    entry: str
    matcher: Matcher
    #: where the entry was written: opaque here (compile passes its `Source`)
    source: object = None


@dataclass(frozen=True, slots=True)
class RuleIndex:
    """One list's rules by a shell command's first word, each with its place in the list.

    `exec(git *)` can only meet a command whose first word is `git`, so a command is matched
    against its word's rules and those with no literal first word, never the whole list. The
    two are kept apart (a merged tuple per word would cost words x generic rules to build) and
    `first_match` interleaves them by list position, so the reported rule is still the first
    matching one in the list.
    """

    rules: tuple[Rule, ...]
    by_word: Mapping[str, tuple[tuple[int, Rule], ...]]
    generic: tuple[tuple[int, Rule], ...]

    @staticmethod
    def build(rules: tuple[Rule, ...]) -> RuleIndex:
        own: dict[str, list[tuple[int, Rule]]] = {}
        generic: list[tuple[int, Rule]] = []
        for position, rule in enumerate(rules):
            word = rule.matcher.first_word
            (generic if word is None else own.setdefault(word, [])).append((position, rule))
        by_word = {word: tuple(placed) for word, placed in own.items()}
        return RuleIndex(rules, MappingProxyType(by_word), tuple(generic))

    def in_order(self, word: str | None) -> Iterator[Rule]:
        """The rules that can meet a command whose first word is `word` (all of them for
        None), in list order."""
        if word is None:
            return iter(self.rules)
        placed = heapq.merge(self.by_word.get(word, ()), self.generic, key=lambda p: p[0])
        return (rule for _, rule in placed)

    def first_match(
        self, words: tuple[str | None, ...] | None, part: Part, strict: bool
    ) -> Rule | None:
        """The first rule of the list, in list order, that matches `part`."""
        if words is None or not words or words[0] is None:
            for rule in self.rules:
                if rule.matcher.matches(part, strict):
                    return rule
            return None
        found: Rule | None = None
        found_at = len(self.rules)
        for position, rule in self.by_word.get(words[0], ()):
            if rule.matcher.matches(part, strict):
                found, found_at = rule, position
                break
        for position, rule in self.generic:
            if position > found_at:
                break
            if rule.matcher.matches(part, strict):
                return rule
        return found


@dataclass(frozen=True, slots=True)
class ToolCallRules:
    """One tool's call rules at one layer (contract section 3), after group expansion.

    `name_admitted`: the layer admits the tool by name (a plain entry, a glob, a group, or no
    allow list at all), so an unmatched call is allowed; otherwise it was admitted by
    specifiers only and an unmatched call gets `call_default`.
    """

    tool: str
    spec: ArgumentSpec
    deny: tuple[Rule, ...] = ()
    ask: tuple[Rule, ...] = ()
    allow: tuple[Rule, ...] = ()
    name_admitted: bool = True
    #: the plain-name entry that admitted the tool, for provenance ("exec", "group:runtime")
    name_entry: str | None = None
    name_source: object = None
    #: the plain name in `ask`: every call asks
    plain_ask: str | None = None
    plain_ask_source: object = None
    call_default: Effect = Effect.DENY
    call_default_source: object = None

    deny_index: RuleIndex = field(init=False, repr=False, compare=False)
    ask_index: RuleIndex = field(init=False, repr=False, compare=False)
    allow_index: RuleIndex = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.call_default is Effect.ALLOW:
            raise ValueError("callDefault is deny or ask")
        object.__setattr__(self, "deny_index", RuleIndex.build(self.deny))
        object.__setattr__(self, "ask_index", RuleIndex.build(self.ask))
        object.__setattr__(self, "allow_index", RuleIndex.build(self.allow))

    @property
    def has_specifiers(self) -> bool:
        return bool(self.deny or self.ask or self.allow)


@dataclass(frozen=True, slots=True)
class LayerCallRules:
    """The call rules of one layer of one run: tool id -> its rules there."""

    label: str
    tools: Mapping[str, ToolCallRules] = field(default_factory=dict)
    #: the document path of the scope the rules are written in (`agents.entries.coder.tools`):
    #: a verdict names its list from it (`...tools.ask`), not from the layer's allow label
    scope: str | None = None

    def __post_init__(self) -> None:
        # a read-only view of a private copy: the compiled policy shares it across threads
        object.__setattr__(self, "tools", MappingProxyType(dict(self.tools)))

    def list_of(self, name: str) -> str:
        """The path of this scope's list `name` (`tools.ask`), else the layer's label."""
        return self.label if self.scope is None else scope_list(self.scope, name)


class Reason(str, Enum):
    DENY_RULE = "deny rule"
    ASK_RULE = "ask rule"
    PLAIN_ASK = "plain name in ask"
    ALLOW_RULE = "allow rule"
    NAME_ADMITTED = "admitted by name"
    SCREENED = "payload screened"
    CALL_DEFAULT = "callDefault"
    UNANALYSABLE = "cannot be analysed"
    NO_CALL_RULES = "no call rules"
    TOOL_NOT_IN_RUN = "tool not in run"


#: which list of a scope holds the rule behind a verdict of each reason
_LIST_OF_REASON: Mapping[Reason, str] = {
    Reason.DENY_RULE: "deny",
    Reason.ASK_RULE: "ask",
    Reason.PLAIN_ASK: "ask",
    Reason.ALLOW_RULE: "allow",
    Reason.NAME_ADMITTED: "allow",
    Reason.CALL_DEFAULT: "callDefault",
    Reason.UNANALYSABLE: "callDefault",
}


class Verdict(NamedTuple):
    """One decision with its provenance.

    `tool` is the tool whose rules decided: `write` for `exec("echo x > f")`'s redirection.
    `subject` is the part that decided: the sub-command's words, the path, the host.
    """

    # per-call value on the hot path: a NamedTuple (immutable too) is built 5x faster

    effect: Effect
    reason: Reason
    tool: str
    layer: str | None = None
    entry: str | None = None
    source: object = None
    subject: str = ""
    detail: str = ""
    #: the document path of the deciding layer's scope (see `rule_list`)
    scope: str | None = None

    @property
    def rule_list(self) -> str | None:
        """The list the deciding rule is written in (`tools.deny`, `agents.entries.coder.tools
        .ask`, `tools.callDefault`), else the layer's label; None when no layer decided."""
        name = _LIST_OF_REASON.get(self.reason)
        if name is None or self.scope is None or self.entry is None:
            return self.layer
        return scope_list(self.scope, name)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "decision": self.effect.label,
            "reason": self.reason.value,
            "tool": self.tool,
            "layer": self.rule_list,
            "entry": self.entry,
            "source": None if self.source is None else str(self.source),
            "subject": self.subject,
        }
        if self.detail:
            data["detail"] = self.detail
        return data


class CallDecision(NamedTuple):
    """The run's decision for one call: the most restrictive layer verdict, and every layer's."""

    # per-call value on the hot path: a NamedTuple (immutable too) is built 5x faster

    tool: str
    verdict: Verdict
    layers: tuple[Verdict, ...]

    @property
    def effect(self) -> Effect:
        return self.verdict.effect

    def to_json(self) -> dict[str, Any]:
        """What `explain --call` and `resolve --format json` will print (stable keys)."""
        return {
            "tool": self.tool,
            "decision": self.verdict.effect.label,
            "decidedBy": self.verdict.to_json(),
            "layers": [v.to_json() for v in self.layers],
        }
