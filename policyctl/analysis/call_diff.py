"""The call-rule part of `policyctl diff`: rules that changed per context, decisions that changed.

Per context of the compared matrix, and per tool both policies allow there, each layer's call
rules (`Resolution.call_layers`) are compared: a deny or ask rule removed, an allow rule
added where the tool is admitted by specifiers only, a layer whose calls are no longer
limited to its allow rules (the tool now admitted by name), a plain-name `ask` removed,
`callDefault` relaxed from deny to ask: each may let a call through that did not get through,
and is a widening change. The opposite ones narrow. Identical changes are grouped, with the
contexts they happen in.

With a corpus of recorded calls (`--calls FILE`), every call is decided by both policies, in
its own context or, without one, in every context of the matrix; a decision that moves from
deny to ask, deny to allow or ask to allow widens (`explain.decisions.change_kind`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..callrules.model import CallDecision, Rule, ToolCallRules
from ..explain.decisions import ChangeKind, call_text, change_kind, describe

if TYPE_CHECKING:
    from ..pipeline.result import Resolution
    from .call_corpus import RecordedCall


@dataclass
class RuleChange:
    """One call-rule difference of one tool at one layer, in `contexts`."""

    kind: ChangeKind
    tool: str
    layer: str
    what: str
    source: str | None
    contexts: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "tool": self.tool,
            "layer": self.layer,
            "change": self.what,
            "source": self.source,
            "contexts": self.contexts,
        }


@dataclass
class DecisionChange:
    """A recorded call whose decision differs between the policies, in `contexts`."""

    kind: ChangeKind
    line: int
    call: str
    before: str
    after: str
    #: what decided in the policy that is more restrictive (the new one for a narrowing)
    why: str
    contexts: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "line": self.line,
            "call": self.call,
            "before": self.before,
            "after": self.after,
            "why": self.why,
            "contexts": self.contexts,
        }


def _by_tool(res: Resolution) -> dict[tuple[str, str], ToolCallRules]:
    return {
        (layer.label, tool): rules
        for layer in res.call_layers
        for tool, rules in layer.tools.items()
    }


def _entries(rules: tuple[Rule, ...]) -> dict[str, Rule]:
    return {rule.entry: rule for rule in rules}


def _where(rule: Rule) -> str | None:
    return None if rule.source is None else str(rule.source)


def tool_rule_changes(
    old: ToolCallRules | None, new: ToolCallRules | None
) -> Iterator[tuple[ChangeKind, str, str | None]]:
    """What changed between one tool's rules at one layer: (kind, description, where)."""
    some = old if old is not None else new
    if some is None:
        return
    empty = ToolCallRules(some.tool, some.spec)
    before, after = old or empty, new or empty
    # a deny or ask rule removed lets calls through; one added stops them
    for label, was, now in (("deny", before.deny, after.deny), ("ask", before.ask, after.ask)):
        was_e, now_e = _entries(was), _entries(now)
        for entry, rule in was_e.items():
            if entry not in now_e:
                yield "widen", f'{label} rule "{entry}" removed', _where(rule)
        for entry, rule in now_e.items():
            if entry not in was_e:
                yield "narrow", f'{label} rule "{entry}" added', _where(rule)
    # allow rules limit calls only where the tool is admitted by specifiers alone
    limited_before = bool(before.allow) and not before.name_admitted
    limited_after = bool(after.allow) and not after.name_admitted
    if limited_before and not limited_after:
        by = f"admitted by name ({after.name_entry or after.tool})"
        yield "widen", f"calls no longer limited to allow rules: {by}", _src(after.name_source)
    elif limited_after and not limited_before:
        yield "narrow", "calls now limited to allow rules (callDefault for the rest)", None
    elif limited_before and limited_after:
        was_a, now_a = _entries(before.allow), _entries(after.allow)
        for entry, rule in now_a.items():
            if entry not in was_a:
                yield "widen", f'allow rule "{entry}" added', _where(rule)
        for entry, rule in was_a.items():
            if entry not in now_a:
                yield "narrow", f'allow rule "{entry}" removed', _where(rule)
    if before.plain_ask and not after.plain_ask:
        yield "widen", f'plain-name ask "{before.plain_ask}" removed', _src(before.plain_ask_source)
    if after.plain_ask and not before.plain_ask:
        yield "narrow", f'plain-name ask "{after.plain_ask}" added', _src(after.plain_ask_source)
    if before.has_specifiers and after.has_specifiers:
        # callDefault decides unmatched calls of a limited tool, and unanalysable ones always
        kind = change_kind(before.call_default, after.call_default)
        if kind is not None:
            yield (
                kind,
                f"callDefault {before.call_default.label} -> {after.call_default.label}",
                _src(after.call_default_source),
            )


def _src(source: object) -> str | None:
    return None if source is None else str(source)


def rule_changes(
    before: Resolution, after: Resolution
) -> Iterator[tuple[ChangeKind, str, str, str, str | None]]:
    """(kind, tool, layer, description, where) for the tools both runs allow."""
    old, new = _by_tool(before), _by_tool(after)
    both = set(before.allowed) & set(after.allowed)
    for key in sorted(set(old) | set(new)):
        label, tool = key
        if tool not in both:
            continue  # gained or lost by name: the name-level diff says so
        for kind, what, where in tool_rule_changes(old.get(key), new.get(key)):
            yield kind, tool, label, what, where


class RuleDiff:
    """Collects rule changes over the contexts, grouped by what changed."""

    def __init__(self) -> None:
        self.groups: dict[tuple[ChangeKind, str, str, str, str | None], list[str]] = {}

    def add(self, label: str, before: Resolution, after: Resolution) -> None:
        for change in rule_changes(before, after):
            self.groups.setdefault(change, []).append(label)

    def changes(self) -> list[RuleChange]:
        out = [RuleChange(k, t, layer, w, s, c) for (k, t, layer, w, s), c in self.groups.items()]
        out.sort(key=lambda c: (c.kind != "widen", -len(c.contexts), c.tool, c.what))
        return out


def _signature(call: RecordedCall) -> str:
    """What a decision reads of a call: its tool and arguments (JSON from the corpus)."""
    import json

    return call.tool + "\x00" + json.dumps(call.args, sort_keys=True, default=repr)


class DecisionDiff:
    """Decides every recorded call under both policies; memoised per call and rule set, so
    thousands of contexts that share their call layers cost one decision each."""

    def __init__(self, calls: Sequence[RecordedCall]) -> None:
        self.calls = calls
        self.groups: dict[tuple[ChangeKind, int, str, str, str, str], list[str]] = {}
        self._memo: dict[tuple[object, ...], CallDecision] = {}
        self._signatures = [_signature(call) for call in calls]
        self._texts = [call_text(call.tool, call.args) for call in calls]
        #: what the memo keys' ids point at, kept alive so no id is reused
        self._alive: list[object] = []

    def _run_key(self, side: str, res: Resolution) -> tuple[object, ...]:
        """What a decision depends on besides the call: the layers' rules and the run's
        tools (the roots are the same in every context the diff compares). Resolutions build
        their layers afresh, but the rules inside are the compiled policy's, shared."""
        layers = res.call_layers
        self._alive.append(layers)
        rules = tuple(
            (layer.label, tuple((t, id(r)) for t, r in layer.tools.items())) for layer in layers
        )
        return (side, rules, frozenset(res.allowed))

    def _decide(self, run: tuple[object, ...], res: Resolution, index: int) -> CallDecision:
        # identical calls (a transcript repeats itself) are decided once per rule set
        key = (run, self._signatures[index])
        found = self._memo.get(key)
        if found is None:
            call = self.calls[index]
            found = self._memo[key] = res.decide_call(call.tool, call.args)
        return found

    def add(
        self, label: str, before: Resolution, after: Resolution, only: int | None = None
    ) -> None:
        """Decide the calls without a context of their own (or only call `only`) here."""
        old_run, new_run = self._run_key("old", before), self._run_key("new", after)
        for index, call in enumerate(self.calls):
            if only is not None and index != only:
                continue
            if only is None and call.context is not None:
                continue  # decided once, in its own context
            old = self._decide(old_run, before, index)
            new = self._decide(new_run, after, index)
            kind = change_kind(old.effect, new.effect)
            if kind is None:
                continue
            stricter = new if kind == "narrow" else old
            key = (
                kind,
                call.line,
                self._texts[index],
                old.effect.label,
                new.effect.label,
                describe(stricter.verdict),
            )
            self.groups.setdefault(key, []).append(label)

    def changes(self) -> list[DecisionChange]:
        out = [DecisionChange(*key, contexts) for key, contexts in self.groups.items()]
        out.sort(key=lambda c: (c.kind != "widen", c.line, -len(c.contexts)))
        return out


# -- rendering (text and Markdown; `diff.render_text` and `render_markdown` call these) ------


def _contexts_text(contexts: list[str]) -> list[str]:
    from ..escape import printable_line

    lines = [f"    {printable_line(label)}" for label in contexts[:3]]
    if len(contexts) > 3:
        lines.append(f"    ... and {len(contexts) - 3} more")
    return lines


def _n(count: int, what: str = "context") -> str:
    return f"{count} {what}{'s' * (count != 1)}"


def text_lines(rules: list[RuleChange], calls: list[DecisionChange] | None) -> list[str]:
    """The call-rule sections of the text report (nothing when nothing changed)."""
    from ..escape import printable_line

    lines: list[str] = []
    if rules:
        lines.append(f"call rules: {_n(len(rules), 'change')} for tools both policies allow")
    for c in rules:
        where = f" ({c.source})" if c.source else ""
        lines.append(
            f"{'+' if c.kind == 'widen' else '-'} {_n(len(c.contexts))} {c.kind}: "
            f"{printable_line(c.tool)} at {printable_line(c.layer)}: "
            f"{printable_line(c.what)}{printable_line(where)}"
        )
        lines.extend(_contexts_text(c.contexts))
    if calls is not None:
        lines.append(
            f"recorded calls: {_n(len(calls), 'decision')} change"
            + ("" if calls else " (no recorded call is decided differently)")
        )
        for d in calls:
            lines.append(
                f"{'+' if d.kind == 'widen' else '-'} line {d.line} {printable_line(d.call)}: "
                f"{d.before} -> {d.after} in {_n(len(d.contexts))} ({d.kind}); "
                f"{'was' if d.kind == 'widen' else 'now'} {printable_line(d.why)}"
            )
            lines.extend(_contexts_text(d.contexts))
    return lines


def summary(rules: list[RuleChange], calls: list[DecisionChange] | None) -> str:
    """`; 2 call-rule changes widen, 1 narrows; 1 recorded call widens` (empty: no change)."""
    out = ""
    for what, items in (("call-rule change", rules), ("recorded call", calls or [])):
        if not items:
            continue
        widen = sum(1 for c in items if c.kind == "widen")
        out += f"; {_n(widen, what)} widen{'s' * (widen == 1)}, {len(items) - widen} narrow"
        out += "s" if len(items) - widen == 1 else ""
    return out


def markdown_lines(rules: list[RuleChange], calls: list[DecisionChange] | None) -> list[str]:
    from ..escape import md_code, md_literal

    def contexts(items: list[str]) -> str:
        shown = "<br>".join(md_code(label) for label in items[:3])
        return f"{len(items)}: {shown}" + (f"<br>… {len(items) - 3} more" if len(items) > 3 else "")

    lines: list[str] = []
    if rules:
        lines += [
            "",
            "#### Call rules that changed",
            "",
            "| change | contexts | tool | layer | what | where |",
            "|---|---|---|---|---|---|",
        ]
        for c in rules:
            lines.append(
                f"| {c.kind} | {contexts(c.contexts)} | {md_code(c.tool)} | {md_code(c.layer)} "
                f"| {md_code(c.what)} | {md_literal(c.source or '')} |"
            )
    if calls:
        lines += [
            "",
            "#### Recorded calls decided differently",
            "",
            "| change | line | call | before → after | contexts | decided by |",
            "|---|---|---|---|---|---|",
        ]
        for d in calls:
            lines.append(
                f"| {d.kind} | {d.line} | {md_code(d.call)} | {d.before} → {d.after} "
                f"| {contexts(d.contexts)} | {md_code(d.why)} |"
            )
    elif calls is not None:
        lines += ["", "No recorded call is decided differently."]
    return lines
