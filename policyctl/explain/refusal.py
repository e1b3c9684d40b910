"""The texts a refused or asked call gets: which rule decided, in which list, at what detail.

The runtime's refusals and approval questions and the in-process adapters of other agent
loops (`integrations.nanobot`) say the same sentence for the same decision; it is made here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..compile.layers import Layer, spec
from ..escape import printable_line

if TYPE_CHECKING:
    from ..callrules import Verdict

SUBJECT_SHOWN = 200  # characters of the deciding sub-command or path a refusal quotes


def quote(text: str | None) -> str:
    shown = printable_line(text or "")
    if len(shown) > SUBJECT_SHOWN:
        shown = shown[:SUBJECT_SHOWN] + "..."
    return shown


def _where(verdict: Verdict) -> str:
    """The list the rule is written in; a rule a parent run handed down says so too."""
    where = verdict.rule_list
    if not where:
        return "for this run"
    if verdict.layer == _INHERITED and where != verdict.layer:
        return f"at {quote(where)} ({_INHERITED}, from the parent run)"
    return f"at {quote(where)}"


_INHERITED = spec(Layer.INHERITANCE).label


def how_decided(verdict: Verdict) -> str:
    """One sentence: which rule decided, at which layer (control characters escaped)."""
    from ..callrules import Reason

    entry, reason = quote(verdict.entry), verdict.reason
    if reason is Reason.DENY_RULE:
        return f'call rule "{entry}" {_where(verdict)} denies it'
    if reason is Reason.ASK_RULE:
        return f'call rule "{entry}" {_where(verdict)} asks for approval'
    if reason is Reason.PLAIN_ASK:
        return f'"{entry}" is in ask {_where(verdict)}: every call asks for approval'
    if reason is Reason.UNANALYSABLE and verdict.layer is None:
        return quote(verdict.detail)
    if reason is Reason.UNANALYSABLE:
        return (
            f"it cannot be analysed ({quote(verdict.detail)}), so callDefault "
            f"({verdict.effect.label}) {_where(verdict)} applies"
        )
    if reason is Reason.CALL_DEFAULT:
        return f"no call rule {_where(verdict)} allows it (callDefault: {verdict.effect.label})"
    return quote(verdict.detail) or f"{reason.value} {_where(verdict)}"


def shown_detail(verdict: Verdict, level: str) -> dict[str, Any]:
    """What the model reads of the provenance: `full` all of it, `layer` the rule and the layer,
    `minimal` nothing."""
    if level == "minimal":
        return {}
    decided: dict[str, Any] = {"layer": quote(verdict.rule_list), "entry": quote(verdict.entry)}
    if level == "full":
        decided.update(
            {
                "tool": verdict.tool,
                "reason": verdict.reason.value,
                "source": None if verdict.source is None else quote(str(verdict.source)),
                "subject": quote(verdict.subject),
            }
        )
        if verdict.detail:
            decided["detail"] = quote(verdict.detail)
    return {"decidedBy": decided}


def as_other_tool(tool: str, verdict: Verdict, level: str) -> str:
    """When another tool's rule decided (a patch's file decided as a `write` call, an edit as
    a `read`, a redirection), say so; at refusal detail `full`, also which file of the call
    (`layer` keeps to the rule and the layer: the file is the resolved, absolute path)."""
    if verdict.tool == tool or level == "minimal":
        return ""
    if level == "full" and verdict.subject:
        return f' ({tool}\'s file "{quote(verdict.subject)}" is decided as a {verdict.tool} call)'
    return f" (a file of this {tool} call is decided as a {verdict.tool} call)"


def refusal_reason(tool: str, verdict: Verdict, level: str, *, what: str = "call") -> str:
    if level == "minimal":
        return f"this {what} of {tool} is not allowed in this run"
    text = f"{what} refused: {how_decided(verdict)}"
    related = as_other_tool(tool, verdict, level)
    if related:
        text += related
    elif level == "full" and verdict.subject:
        text += f' (on "{quote(verdict.subject)}")'
    return text
