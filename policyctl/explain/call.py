"""Explain one call: `Resolution.decide_call` rendered for `policyctl explain --call`.

The decision (allow, ask, deny) with the layer that decided (its number, and its label as in
the trail; for a deny or ask rule the key of the list the rule is written in, `tools.deny` or
`tools.ask`, as `explain --tool` labels a removal by a deny list), the entry, where it is
written and the sub-command, path or URL that decided, then every layer's verdict; for a
shell line, how it was understood (`explain/shell.py`). A tool the
run does not have is explained at name level first (`explain.decide_tool`): no call of it can
be made, whatever its call rules say.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..escape import printable_line
from .labels import list_label
from .shell import ShellReading, read_line
from .tool import ToolDecision, decide_tool, summary_line

if TYPE_CHECKING:
    from ..callrules.model import CallDecision, Verdict
    from ..pipeline.result import Resolution

#: the largest `--call` argument object accepted (its JSON text)
MAX_CALL_BYTES = 256 * 1024


class CallArgumentsError(ValueError):
    """`--call` is not a JSON object of arguments (the message says why)."""


def parse_call(text: str) -> dict[str, Any]:
    """A call's arguments from JSON text: an object, at most `MAX_CALL_BYTES`, no NaN."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_CALL_BYTES:
        raise CallArgumentsError(f"--call is {size} bytes; at most {MAX_CALL_BYTES} are accepted")

    def refuse(name: str) -> Any:
        raise CallArgumentsError(f"--call holds {name}, which is not JSON")

    try:
        value = json.loads(text, parse_constant=refuse)
    except RecursionError:
        raise CallArgumentsError("--call is nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise CallArgumentsError(
            f"--call is not JSON: {exc.msg} at column {exc.colno}; write the arguments as an "
            """object, e.g. --call '{"command": "git status"}'"""
        ) from None
    if not isinstance(value, dict):
        raise CallArgumentsError(
            f"--call must be a JSON object of arguments, not {type(value).__name__}; e.g. "
            """--call '{"command": "git status"}'"""
        )
    return value


@dataclass(frozen=True, slots=True)
class CallExplanation:
    tool: str
    args: Mapping[str, Any]
    decision: CallDecision
    #: the tool at name level (why it is not in the run, when it is not)
    name_level: ToolDecision
    #: trail label -> (layer number, layer name), for the applied layers
    stages: Mapping[str, tuple[int, str]]
    #: how a shell line was understood (None: the tool's argument is not a shell line)
    reading: ShellReading | None = None

    def _stage(self, verdict: Verdict) -> str:
        if verdict.layer is None:
            return "the run (not a layer's rule)"
        found = self.stages.get(verdict.layer)
        if found is None:
            return verdict.layer
        return f"layer {found[0]} {found[1]} ({list_label(verdict)})"

    def render(self) -> str:
        d = self.decision
        v = d.verdict
        call = json.dumps(dict(self.args), ensure_ascii=True, sort_keys=True)
        lines = [f"{self.tool} {call}: {v.effect.label.upper()}"]
        removal = self.name_level.removal
        if not self.name_level.allowed:
            if removal is not None:
                lines.append(f"  {self.tool} is not in this run: {summary_line(removal)}")
            else:
                lines.append(f"  {self.name_level.fix}")
        lines.append(f"  decided by: {self._stage(v)}")
        lines.append(f"  reason:     {v.reason.value}")
        if v.entry is not None:
            lines.append(f'  entry:      "{v.entry}"' + _tool_note(v, self.tool))
        if v.source is not None:
            lines.append(f"  where:      {v.source}")
        if v.subject:
            # the model's arguments: one line, whatever they hold (a patch has newlines)
            lines.append(f"  decided on: {printable_line(v.subject)}")
        if v.detail:
            lines.append(f"  detail:     {printable_line(v.detail)}")
        if d.layers:
            lines.append("  layers:")
            for layer in d.layers:
                where = f", {layer.source}" if layer.source is not None else ""
                entry = f' "{layer.entry}"' if layer.entry and layer.entry != "callDefault" else ""
                on = f" on {printable_line(layer.subject)}" if layer.subject else ""
                lines.append(
                    f"    {self._stage(layer)}: {layer.effect.label} "
                    f"({layer.reason.value}{entry}{where}){on}"
                )
        elif self.name_level.allowed:
            lines.append("  no layer of this run has call rules for this call")
        if self.reading is not None:
            lines.extend(self.reading.render())
        return "\n".join(lines)

    def to_json(self) -> dict[str, object]:
        out = self.decision.to_json()
        out["args"] = dict(self.args)
        out["allowedByName"] = self.name_level.allowed
        for verdict, row in zip(
            (self.decision.verdict, *self.decision.layers),
            (out["decidedBy"], *out["layers"]),
            strict=True,
        ):
            found = self.stages.get(verdict.layer) if verdict.layer else None
            row["layer"] = list_label(verdict)
            row["stage"] = found[0] if found is not None else None
            row["location"] = _location(verdict.source)
        if not self.name_level.allowed:
            out["nameLevel"] = self.name_level.to_json()
        if self.reading is not None:
            out["understood"] = self.reading.to_json()
        return out


def _tool_note(verdict: Verdict, tool: str) -> str:
    """A redirection is decided as a call of the write (or read) tool: say so."""
    return f" (rules of {verdict.tool})" if verdict.tool != tool else ""


def _location(source: object) -> dict[str, object] | None:
    file, line, column = (getattr(source, k, None) for k in ("file", "line", "column"))
    return None if file is None else {"file": file, "line": line, "column": column}


def explain_call(resolution: Resolution, tool: str, args: Mapping[str, Any]) -> CallExplanation:
    name_level = decide_tool(resolution, tool)  # normalises the name (`bash` -> `exec`)
    name = name_level.tool
    stages: dict[str, tuple[int, str]] = {}
    for trace in resolution.layers:
        if trace.applied:
            stages.setdefault(trace.label, (trace.stage, trace.name))
    decision = resolution.decide_call(name, args)
    reading = read_line(resolution, name, args) if name_level.allowed else None
    return CallExplanation(name, args, decision, name_level, stages, reading)
