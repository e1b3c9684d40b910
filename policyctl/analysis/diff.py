"""Impact diff: which contexts gain or lose which tools between two policies, and why.

Both policies are resolved over the union of their context matrices. A lost tool is explained
by the rule that removes it in the new policy; a gained tool by the rule that removed it in
the old one. Identical changes are grouped: one line for "12 contexts lose exec via ...".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..compile.compiled import CompiledPolicy
from ..context import RunContext
from ..escape import md_code, md_literal, printable_line
from ..located import list_path
from ..pipeline.resolve import resolve
from ..pipeline.result import RemovedTool, Resolution
from .matrix import DEFAULT_MAX_CONTEXTS, MatrixContext, context_matrix, main_session_key
from .probes import MAX_PROBES, probe_tools, with_probes

if TYPE_CHECKING:  # the call-rule core loads only when call rules or a corpus are compared
    from .call_corpus import RecordedCall
    from .call_diff import DecisionChange, RuleChange


@dataclass
class Change:
    direction: str  # "gain" or "lose"
    tools: tuple[str, ...]
    rule: str
    where: str | None
    contexts: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "direction": self.direction,
            "tools": list(self.tools),
            "rule": self.rule,
            "source": self.where,
            "contexts": self.contexts,
        }


@dataclass
class DiffResult:
    old: str
    new: str
    contexts: int
    sampled: bool
    changes: list[Change]
    #: call rules that changed for tools both policies allow (`call_diff`)
    rule_changes: list[RuleChange] = field(default_factory=list)
    #: recorded calls whose decision changed (`--calls`), None without a corpus
    call_changes: list[DecisionChange] | None = None

    @property
    def widened(self) -> bool:
        return (
            any(c.direction == "gain" for c in self.changes)
            or any(c.kind == "widen" for c in self.rule_changes)
            or any(c.kind == "widen" for c in self.call_changes or ())
        )

    @property
    def conclusive(self) -> bool:
        """Whether the result shows if the change widens: a widening found is one, but on a
        sampled matrix finding none does not show that no context gains a tool."""
        return self.widened or not self.sampled

    def to_json(self) -> dict[str, Any]:
        return {
            "old": self.old,
            "new": self.new,
            "contexts": self.contexts,
            "sampled": self.sampled,
            "widened": self.widened,
            "conclusive": self.conclusive,
            "changes": [c.to_json() for c in self.changes],
            "callRuleChanges": [c.to_json() for c in self.rule_changes],
            "callChanges": None
            if self.call_changes is None
            else [c.to_json() for c in self.call_changes],
        }


def _rule(r: RemovedTool) -> tuple[str, str | None]:
    if r.kind == "deny" and r.entry:
        return f'{list_path(r.scope)} ("{r.entry}")', str(r.source) if r.source else None
    if r.kind == "allow":
        return f"{r.scope} (not in the allow list; {r.label})", str(r.source) if r.source else None
    return f"{r.label} ({r.kind})", None


def diff_policies(
    old: CompiledPolicy,
    new: CompiledPolicy,
    *,
    old_name: str,
    new_name: str,
    max_contexts: int = DEFAULT_MAX_CONTEXTS,
    calls: Sequence[RecordedCall] | None = None,
    workspace: str | None = None,
    home: str | None = None,
) -> DiffResult:
    """`calls`: a corpus whose decisions are compared; `workspace` and `home`: the roots of
    every compared context that names none (path rules are anchored there)."""

    def rooted(context: RunContext) -> RunContext:
        return replace(
            context,
            workspace=context.workspace if context.workspace is not None else workspace,
            home=context.home if context.home is not None else home,
        )

    if max_contexts < 1:
        raise ValueError(f"max_contexts must be >= 1, not {max_contexts}")
    cells: dict[str, MatrixContext] = {}
    sampled = False
    # a session key one policy takes for the main session and the other does not (a change
    # of `session.mainKey` or `session.scope`) is a cell of both matrices
    main_keys = {main_session_key(old), main_session_key(new)}
    for policy in (old, new):
        matrix = context_matrix(policy, max_contexts, main_keys=main_keys)
        sampled = sampled or matrix.sampled
        for cell in matrix.contexts:
            cells.setdefault(cell.label, cell)
    groups: dict[tuple[str, tuple[str, ...], str, str | None], list[str]] = {}
    with_calls = old.has_call_rules or new.has_call_rules or calls is not None
    if with_calls:
        from .call_diff import DecisionDiff, RuleDiff

        rule_diff, decision_diff = RuleDiff(), DecisionDiff(calls or ())
    # the tools a runtime may connect that neither file declares (probes.py): a change that
    # only concerns them must not compare as "no change"
    probes, capped = probe_tools(old, new)
    sampled = sampled or capped
    old_tools, new_tools = with_probes(old, probes), with_probes(new, probes)
    for label, cell in cells.items():
        context = rooted(cell.context)
        before = resolve(old, context, old_tools, require_tools=False)
        after = resolve(new, context, new_tools, require_tools=False)
        if with_calls:
            rule_diff.add(label, before, after)
            decision_diff.add(label, before, after)
        # a gained tool is explained by the old policy's rule, a lost one by the new policy's
        for direction, explained_by, changed in (
            ("gain", before, _changed(before, after)),
            ("lose", after, _changed(after, before)),
        ):
            by_rule: dict[tuple[str, str | None], list[str]] = {}
            for tool in changed:
                removal = explained_by.removal(tool)
                rule = _rule(removal) if removal else ("not in the inventory", None)
                by_rule.setdefault(rule, []).append(tool)
            for (rule_text, where), tools in by_rule.items():
                groups.setdefault((direction, tuple(tools), rule_text, where), []).append(label)
    changes = [
        Change(d, tools, rule, where, labels) for (d, tools, rule, where), labels in groups.items()
    ]
    changes.sort(key=lambda c: (c.direction != "gain", -len(c.contexts), c.tools))
    for index, call in enumerate(calls or ()):
        if call.context is not None:  # a call with its own context is decided there only
            context = rooted(call.context.to_run_context())
            before = resolve(old, context, require_tools=False)
            after = resolve(new, context, require_tools=False)
            decision_diff.add(f"line {call.line}: its own context", before, after, only=index)
    if not with_calls:
        return DiffResult(old_name, new_name, len(cells), sampled, changes)
    return DiffResult(
        old_name,
        new_name,
        len(cells),
        sampled,
        changes,
        rule_diff.changes(),
        None if calls is None else decision_diff.changes(),
    )


def _changed(before: Resolution, after: Resolution) -> list[str]:
    """Tools `after` allows that `before` does not, in `after`'s inventory order."""
    had = set(before.allowed)
    return [t for t in after.allowed if t not in had]


def render_text(result: DiffResult) -> str:
    lines = [
        f"policyctl diff {result.old} -> {result.new}: {result.contexts} contexts compared"
        + (" (sampled)" if result.sampled else "")
    ]
    if not result.changes:
        lines.append("no context gains or loses a tool")
    for c in result.changes:
        verb = "gain" if c.direction == "gain" else "lose"
        why = "was removed by" if c.direction == "gain" else "via"
        where = f", {c.where}" if c.where else ""
        lines.append(
            f"{'+' if verb == 'gain' else '-'} {len(c.contexts)} context"
            f"{'s' * (len(c.contexts) != 1)} {verb} {printable_line(', '.join(c.tools))}, "
            f"{why} {printable_line(c.rule)}{printable_line(where)}"
        )
        for label in c.contexts[:3]:
            lines.append(f"    {printable_line(label)}")
        if len(c.contexts) > 3:
            lines.append(f"    ... and {len(c.contexts) - 3} more")
    if result.rule_changes or result.call_changes is not None:
        from .call_diff import text_lines

        lines.extend(text_lines(result.rule_changes, result.call_changes))
    widened = sum(len(c.contexts) for c in result.changes if c.direction == "gain")
    # a sample cannot show that nothing widened, only that the sampled contexts did not
    verdict = "WIDENED" if result.widened else "not widened"
    if not result.conclusive:
        verdict = "INCONCLUSIVE (sampled), not widened in the contexts compared"
    lines.append(
        f"{verdict}: {widened} context changes "
        f"gain tools, {sum(len(c.contexts) for c in result.changes) - widened} lose tools"
        + _call_summary(result)
    )
    if not result.conclusive:
        lines.append(
            "a sample cannot show that no other context gains a tool: --fail-on-widen fails "
            "unless --allow-sampled accepts it; raise --max-contexts to compare them all (or, "
            f"when more than {MAX_PROBES} changed entries name runtime tools, split the change)"
        )
    return "\n".join(lines) + "\n"


def render_markdown(result: DiffResult) -> str:
    lines = [
        f"### policyctl diff: {md_code(result.old)} → {md_code(result.new)}",
        "",
        f"{result.contexts} contexts compared" + (" (sampled)." if result.sampled else "."),
    ]
    if not result.conclusive:
        lines += [
            "",
            "**Inconclusive:** no widening in the sampled contexts, which does not show that "
            "no other context widens (raise `--max-contexts`, or accept with `--allow-sampled`; "
            f"more than {MAX_PROBES} changed entries naming runtime tools are sampled too).",
        ]
    gains = [c for c in result.changes if c.direction == "gain"]
    losses = [c for c in result.changes if c.direction == "lose"]
    if not result.changes:
        lines += ["", "No context gains or loses a tool."]
    for title, items, why in (
        ("Widened: contexts that gain tools", gains, "was removed by"),
        ("Narrowed: contexts that lose tools", losses, "via"),
    ):
        if not items:
            continue
        lines += [
            "",
            f"#### {title}",
            "",
            "| contexts | tools | rule | where |",
            "|---|---|---|---|",
        ]
        for c in items:
            # Ids, entries and file names come from the policies: escaped, so a backtick, `|`,
            # newline or `<!--` in them cannot break the table or hide the rest of a comment.
            example = "<br>".join(md_code(label) for label in c.contexts[:3])
            more = f"<br>… {len(c.contexts) - 3} more" if len(c.contexts) > 3 else ""
            tools = ", ".join(md_code(t) for t in c.tools)
            lines.append(
                f"| {len(c.contexts)}: {example}{more} | {tools} | {why} "
                f"{md_code(c.rule)} | {md_literal(c.where or '')} |"
            )
    if result.rule_changes or result.call_changes is not None:
        from .call_diff import markdown_lines

        lines.extend(markdown_lines(result.rule_changes, result.call_changes))
    return "\n".join(lines) + "\n"


def _call_summary(result: DiffResult) -> str:
    if not result.rule_changes and result.call_changes is None:
        return ""
    from .call_diff import summary

    return summary(result.rule_changes, result.call_changes)
