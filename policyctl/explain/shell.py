"""How `explain --call` understood a shell line: each command in its canonical form (and as
written, when global options were set aside), what it runs, the files it reads or writes, what
could not be analysed, and the command catalog entry (file:line) each piece of knowledge comes
from, with the rule that decided each part.

This re-reads the line with the same analysis the decision used (`callrules.shell.analyse`
with the run's command catalog) and decides each part with the same functions, so it shows
the decision's own parts rather than a second implementation of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..callrules.commands import Access, Command, Problem, render
from ..callrules.decide import decide_call, decide_part, most_restrictive
from ..callrules.model import ArgumentKind, Verdict
from ..callrules.shell import analyse
from ..callrules.values import Part
from ..escape import printable_line
from .labels import list_label

if TYPE_CHECKING:
    from ..callrules.model import LayerCallRules
    from ..callrules.subject import CallEnvironment
    from ..pipeline.result import Resolution


@dataclass(frozen=True, slots=True)
class ShellReading:
    commands: tuple[tuple[Command, Verdict | None], ...]
    accesses: tuple[tuple[Access, str | None, Verdict | None], ...]
    problems: tuple[Problem, ...]

    def render(self) -> list[str]:
        lines = ["  understood as:"]
        for command, verdict in self.commands:
            what = "runs (screened: deny and ask only)" if command.screen else "command"
            lines.append(f"    {what}: {printable_line(render(command.words))}")
            if command.written is not None:
                lines.append(f"      as written: {printable_line(render(command.written))}")
            if command.source is not None:
                lines.append(f"      model: {command.source}")
            lines.append(f"      decided: {_verdict_line(verdict)}")
        for access, tool, verdict in self.accesses:
            path = "<unknown>" if access.path is None else access.path
            origin = f"model: {access.source}" if access.source else "a redirection"
            lines.append(f"    {access.mode}s: {printable_line(path)} ({origin})")
            lines.append(f"      decided with {tool or 'no tool'}: {_verdict_line(verdict)}")
        for problem in self.problems:
            lines.append(f"    not analysable: {problem.reason}: {printable_line(problem.text)}")
        return lines

    def to_json(self) -> dict[str, object]:
        return {
            "commands": [
                {
                    "words": list(c.words),
                    "written": None if c.written is None else list(c.written),
                    "screened": c.screen,
                    "model": c.source,
                    "decidedBy": None if v is None else v.to_json(),
                }
                for c, v in self.commands
            ],
            "accesses": [
                {
                    "mode": a.mode,
                    "path": a.path,
                    "text": a.text,
                    "model": a.source,
                    "tool": tool,
                    "decidedBy": None if v is None else v.to_json(),
                }
                for a, tool, v in self.accesses
            ],
            "unanalysable": [{"reason": p.reason, "text": p.text} for p in self.problems],
        }


def _verdict_line(verdict: Verdict | None) -> str:
    if verdict is None:
        return "no call rules meet it"
    entry = f' "{verdict.entry}"' if verdict.entry and verdict.entry != "callDefault" else ""
    where = f" ({verdict.source})" if verdict.source is not None else ""
    label = list_label(verdict)
    layer = f" at {label}" if label else ""
    return f"{verdict.effect.label} ({verdict.reason.value}{entry}{layer}){where}"


def _decide_command(
    layers: Sequence[LayerCallRules],
    tool: str,
    command: Command,
    args: Mapping[str, Any],
    env: CallEnvironment,
) -> Verdict | None:
    part = Part(
        args,
        command.text,
        env.roots,
        words=command.words,
        open_tail=command.open_tail,
        screen=command.screen,
        written=command.written,
    )
    found = [
        decide_part(rules, part, layer.label, layer.scope)
        for layer in layers
        if (rules := layer.tools.get(tool)) is not None
    ]
    return most_restrictive(found) if found else None


def read_line(resolution: Resolution, tool: str, args: Mapping[str, Any]) -> ShellReading | None:
    """The line's reading, or None when the tool's argument is not a shell line."""
    env = resolution.call_environment()
    spec = env.spec(tool)
    if spec.kind is not ArgumentKind.SHELL or not isinstance(args.get(spec.key or ""), str):
        return None
    layers = resolution.call_layers
    found = analyse(args[spec.key or ""], env.shell_limits)
    commands = tuple((c, _decide_command(layers, tool, c, args, env)) for c in found.commands)
    accesses: list[tuple[Access, str | None, Verdict | None]] = []
    for access in found.accesses:
        target = env.read_tool if access.mode == "read" else env.write_tool
        verdict = None
        if target is not None and access.path is not None:
            key = env.spec(target).key or "path"
            decision = decide_call(layers, target, {key: access.path}, env)
            verdict = decision.verdict if decision.layers or decision.effect.value else None
        accesses.append((access, target, verdict))
    return ShellReading(commands, tuple(accesses), found.problems)
