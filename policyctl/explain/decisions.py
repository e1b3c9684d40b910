"""Call decisions as the tools around them show and compare them (test, simulate, diff).

- `describe`: one line that says what decided a call: the effect, the rule (entry and kind),
  the layer, file:line:col, and the sub-command or path it was decided on;
- `layer_stage`: which of a run's layers a verdict comes from (by its label in the trail);
- `change_kind`: whether a decision moving from one effect to another widens (deny -> ask,
  deny -> allow, ask -> allow: a call gets through where it did not, or without a person) or
  narrows;
- `check_call`: a policy test's expectation for one call, with the failure text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from ..callrules.model import CallDecision, Effect, Reason, Verdict
from ..compile.layers import LAYERS
from ..escape import printable_line

if TYPE_CHECKING:
    from ..pipeline.result import Resolution

ChangeKind = Literal["widen", "narrow"]
EFFECTS = {"allow": Effect.ALLOW, "ask": Effect.ASK, "deny": Effect.DENY}


def change_kind(before: Effect, after: Effect) -> ChangeKind | None:
    """Effects are ordered allow < ask < deny: a lower effect after the change is a widening."""
    if after < before:
        return "widen"
    if after > before:
        return "narrow"
    return None


def call_text(tool: str, args: Mapping[str, Any], limit: int = 120) -> str:
    """`exec {"command": "git push"}`, clipped: how a call is named in reports."""
    import json

    try:
        shown = json.dumps(dict(args), ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        shown = repr(dict(args))
    if len(shown) > limit:
        shown = shown[: limit - 3] + "..."
    return f"{tool} {shown}"


def describe(verdict: Verdict) -> str:
    """`deny by "exec(rm *)" (deny rule) at agents.coder.tools.allow, team.yaml:40:9, on
    "rm -rf build"`; without a layer (the tool is not in the run), the detail."""
    effect = verdict.effect.label
    if verdict.reason is Reason.TOOL_NOT_IN_RUN:
        return f"{effect}: {verdict.detail or f'the run has no tool {verdict.tool}'}"
    if verdict.reason is Reason.NO_CALL_RULES and verdict.layer is None:
        return f"{effect}: no call rules for {verdict.tool} in this run"
    parts = [effect]
    if verdict.reason is Reason.CALL_DEFAULT:
        parts.append("by callDefault (no rule matched)")
    elif verdict.reason is Reason.UNANALYSABLE:
        parts.append("by callDefault (the call cannot be analysed)")
    elif verdict.entry is not None:
        parts.append(f'by "{verdict.entry}" ({verdict.reason.value})')
    else:
        parts.append(f"({verdict.reason.value})")
    if verdict.layer is not None:
        parts.append(f"at {verdict.rule_list}")
    text = " ".join(parts)
    if verdict.source is not None:
        text += f", {verdict.source}"
    # the model's arguments: one line, whatever they hold (test, simulate and diff print it)
    if verdict.subject:
        text += f', on "{printable_line(verdict.subject)}"'
    if verdict.detail:
        text += f" ({printable_line(verdict.detail)})"
    return text


def layer_stage(res: Resolution, verdict: Verdict) -> int | None:
    """The layer number of the verdict's layer label in this run's trail (None: no layer)."""
    if verdict.layer is None:
        return None
    for trace in res.layers:
        if trace.applied and trace.label == verdict.layer:
            return int(trace.stage)
    return None


def _names_layer(res: Resolution, verdict: Verdict, wanted: int | str) -> bool:
    stage = layer_stage(res, verdict)
    if isinstance(wanted, int):
        return stage == wanted
    text = wanted.strip()
    if verdict.layer is not None and text in (verdict.layer, verdict.rule_list):
        return True
    return stage is not None and LAYERS[stage - 1].name == text.lower()


#: a layer verdict that only passes the call on (its layer has nothing to say about it)
_PASSIVE = (Reason.NO_CALL_RULES, Reason.NAME_ADMITTED, Reason.SCREENED)


def deciding_layers(decision: CallDecision) -> list[Verdict]:
    """The layer verdicts that decide the call: those with the run's effect that say so by a
    rule of their own (a deny, ask or allow rule, a plain-name ask, callDefault), and the
    verdict the run reports. Several layers can decide alike: `git status` allowed by an
    agent's `exec(git *)` is decided by the agent layer even where the global layer admits
    `exec` by name."""
    out = [decision.verdict]
    for v in decision.layers:
        if v is not decision.verdict and v.effect is decision.effect and v.reason not in _PASSIVE:
            out.append(v)
    return out


def _unknown_names(res: Resolution, tool: str, decided_by: int | str | None) -> list[str]:
    from ..diagnostics import did_you_mean

    out = []
    names = res.inventory.names
    if tool not in names:
        near = did_you_mean(tool, list(names))
        hint = f'; did you mean "{near}"?' if near else ""
        out.append(f'no tool "{tool}" in this run\'s inventory{hint}')
    if isinstance(decided_by, int) and not 1 <= decided_by <= len(LAYERS):
        out.append(f"decidedBy {decided_by}: layers are numbered 1 to {len(LAYERS)}")
    elif isinstance(decided_by, str):
        text = decided_by.strip()
        known = [spec.name for spec in LAYERS]
        if text.lower() not in known and text not in {t.label for t in res.layers}:
            near = did_you_mean(text, known)
            hint = f'did you mean "{near}"? ' if near else ""
            out.append(
                f'decidedBy "{text}" names no layer: {hint}write a layer number (1-11), a '
                f"name ({', '.join(known)}) or a label from the trail"
            )
    return out


def check_call(
    res: Resolution,
    tool: str,
    args: Mapping[str, Any],
    expect: str,
    decided_by: int | str | None = None,
) -> tuple[CallDecision, list[str]]:
    """The run's decision for one call and, when it is not what the test says, why not.

    A tool the run's inventory does not have, or a `decidedBy` that names no layer, is a
    failure of its own: a typo must not pass as "denied" or never match."""
    decision = res.decide_call(tool, args)
    verdict = decision.verdict
    failures: list[str] = []
    shown = call_text(tool, args)
    unknown = _unknown_names(res, tool, decided_by)
    if unknown:
        return decision, unknown
    if verdict.effect is not EFFECTS[expect]:
        failures.append(f"expected {shown} to be {expect}, but it is {describe(verdict)}")
    elif decided_by is not None and not any(
        _names_layer(res, v, decided_by) for v in deciding_layers(decision)
    ):
        stage = layer_stage(res, verdict)
        where = (
            f"layer {stage} ({verdict.rule_list})"
            if stage is not None
            else verdict.layer or "no layer"
        )
        failures.append(
            f"expected {shown} to be decided by layer {decided_by}, but {where} decided it: "
            f"{describe(verdict)}"
        )
    if failures:
        for layer_verdict in decision.layers:
            if layer_verdict is not verdict and layer_verdict.reason is not Reason.NO_CALL_RULES:
                failures.append(f"  layer {layer_verdict.rule_list}: {describe(layer_verdict)}")
    return decision, failures
