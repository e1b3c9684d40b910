"""Decisions: one layer's verdict for a call (section 3) and the run's (section 4).

One layer, one part of the call: a matching deny rule -> deny; else a matching ask rule or the
plain name in `ask` -> ask; else a matching allow rule, or the tool admitted by name -> allow;
else the scope's `callDefault`. A layer with no specifier for the tool allows (it decided at
name level), or asks if the plain name is in `ask`. A part that cannot be analysed still meets
the deny rules that can judge it (`tool(*)`, `key=glob`); otherwise a layer with specifiers for
the tool gives it `callDefault`, whatever plain-name allow it also has.

A call's verdict at a layer is the most restrictive over its parts (sub-commands, patch paths)
and its file accesses (decided with the read or write tool's rules at the same layer): a shell
line's redirections, and the paths of a tool the catalog relates to another (`apply_patch`
writes each file it touches through `write`'s rules, `edit` reads through `read`'s). An access
whose tool is not in the run is denied. The run's verdict is the most restrictive over its
layers: deny > ask > allow. Ties go to the earliest layer and the earliest part, so the
provenance is deterministic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .model import (
    ArgumentKind,
    CallDecision,
    Effect,
    LayerCallRules,
    Reason,
    ToolCallRules,
    Verdict,
)
from .subject import CallEnvironment, Subject, build_subject
from .values import Part


def decide_part(rules: ToolCallRules, part: Part, layer: str, scope: str | None = None) -> Verdict:
    tool = rules.tool
    if part.unanalysable is not None:
        if not rules.has_specifiers:
            return _plain(rules, part, layer, scope)
        for rule in rules.deny:
            if rule.matcher.judges_unanalysable and rule.matcher.matches(part, False):
                return Verdict(
                    Effect.DENY,
                    Reason.DENY_RULE,
                    tool,
                    layer,
                    rule.entry,
                    rule.source,
                    part.text,
                    part.unanalysable,
                    scope=scope,
                )
        return Verdict(
            rules.call_default,
            Reason.UNANALYSABLE,
            tool,
            layer,
            "callDefault",
            rules.call_default_source,
            part.text,
            part.unanalysable,
            scope=scope,
        )
    words = part.words
    # a path, a URL or keyed arguments have no command word to look rules up by
    # a command in its canonical form (`git -C . push` as `git push`) also meets deny and
    # ask rules with its words as written (`exec(git -c *)`); an allow rule may match either
    as_written = None if part.written is None else part._replace(words=part.written, written=None)
    deny = rules.deny_index.first_match(words, part, False)
    if deny is None and as_written is not None:
        deny = rules.deny_index.first_match(as_written.words, as_written, False)
    if deny is not None:
        return Verdict(
            Effect.DENY,
            Reason.DENY_RULE,
            tool,
            layer,
            deny.entry,
            deny.source,
            part.text,
            scope=scope,
        )
    ask = rules.ask_index.first_match(words, part, False)
    if ask is None and as_written is not None:
        ask = rules.ask_index.first_match(as_written.words, as_written, False)
    if ask is not None:
        return Verdict(
            Effect.ASK, Reason.ASK_RULE, tool, layer, ask.entry, ask.source, part.text, scope=scope
        )
    if part.screen:  # a payload: only deny and ask rules speak about it
        return Verdict(
            Effect.ALLOW, Reason.SCREENED, tool, layer, None, None, part.text, scope=scope
        )
    if rules.plain_ask is not None:
        return Verdict(
            Effect.ASK,
            Reason.PLAIN_ASK,
            tool,
            layer,
            rules.plain_ask,
            rules.plain_ask_source,
            part.text,
            scope=scope,
        )
    allow = rules.allow_index.first_match(words, part, True)
    if allow is None and as_written is not None:
        allow = rules.allow_index.first_match(as_written.words, as_written, True)
    if allow is not None:
        return Verdict(
            Effect.ALLOW,
            Reason.ALLOW_RULE,
            tool,
            layer,
            allow.entry,
            allow.source,
            part.text,
            scope=scope,
        )
    if rules.name_admitted or not rules.has_specifiers:
        return Verdict(
            Effect.ALLOW,
            Reason.NAME_ADMITTED,
            tool,
            layer,
            rules.name_entry,
            rules.name_source,
            part.text,
            scope=scope,
        )
    return Verdict(
        rules.call_default,
        Reason.CALL_DEFAULT,
        tool,
        layer,
        "callDefault",
        rules.call_default_source,
        part.text,
        scope=scope,
    )


def _plain(rules: ToolCallRules, part: Part, layer: str, scope: str | None) -> Verdict:
    if rules.plain_ask is not None:
        return Verdict(
            Effect.ASK,
            Reason.PLAIN_ASK,
            rules.tool,
            layer,
            rules.plain_ask,
            rules.plain_ask_source,
            part.text,
            part.unanalysable or "",
            scope=scope,
        )
    return Verdict(
        Effect.ALLOW,
        Reason.NAME_ADMITTED,
        rules.tool,
        layer,
        rules.name_entry,
        rules.name_source,
        part.text,
        part.unanalysable or "",
        scope=scope,
    )


_BY_DEFAULT = (Reason.CALL_DEFAULT, Reason.UNANALYSABLE)


def _stricter(best: Verdict | None, candidate: Verdict) -> Verdict:
    """The more restrictive; at equal effect an explicit rule beats callDefault (it says more)."""
    if best is None or candidate.effect > best.effect:
        return candidate
    if (
        candidate.effect == best.effect
        and best.reason in _BY_DEFAULT
        and candidate.reason not in _BY_DEFAULT
    ):
        return candidate
    return best


def _final(verdict: Verdict) -> bool:
    return verdict.effect is Effect.DENY and verdict.reason not in _BY_DEFAULT


def decide_layer(layer: LayerCallRules, subject: Subject) -> Verdict:
    best: Verdict | None = None
    rules = layer.tools.get(subject.tool)
    if rules is not None:
        parts = subject.parts
        if len(parts) == 1 and not subject.accesses:  # a path, a URL, one command
            return decide_part(rules, parts[0], layer.label, layer.scope)
        for part in parts:
            best = _stricter(best, decide_part(rules, part, layer.label, layer.scope))
            if _final(best):
                return best
    for tool, part in subject.accesses:
        access_rules = layer.tools.get(tool)
        if access_rules is None:
            continue
        best = _stricter(best, decide_part(access_rules, part, layer.label, layer.scope))
        if _final(best):
            return best
    if best is None:
        return Verdict(Effect.ALLOW, Reason.NO_CALL_RULES, subject.tool, layer.label)
    return best


def most_restrictive(verdicts: Sequence[Verdict]) -> Verdict:
    best: Verdict | None = None
    for verdict in verdicts:
        best = _stricter(best, verdict)
    if best is None:
        raise ValueError("no verdicts to combine")
    return best


def _needs_analysis(layers: Sequence[LayerCallRules], tool: str, env: CallEnvironment) -> bool:
    """False when no layer has rules that could meet this call: the call pays nothing more."""
    for layer in layers:
        if tool in layer.tools:
            return True
    relations = env.relations.get(tool)
    if relations is not None:
        for relation in relations:
            related = relation.acts_as
            if not env.has(related) or any(related in layer.tools for layer in layers):
                return True
    if env.spec(tool).kind is not ArgumentKind.SHELL:
        return False
    for access_tool in (env.read_tool, env.write_tool):
        if access_tool is None:
            continue
        if not env.has(access_tool) or any(access_tool in layer.tools for layer in layers):
            return True
    return False


def decide_call(
    layers: Sequence[LayerCallRules],
    tool: str,
    args: Mapping[str, Any],
    env: CallEnvironment | None = None,
) -> CallDecision:
    """The run's decision for one call of `tool` with `args`, with every layer's verdict."""
    env = env or CallEnvironment()
    if env.run_tools is not None and tool not in env.run_tools:  # env.has(tool), inlined
        refused = Verdict(
            Effect.DENY, Reason.TOOL_NOT_IN_RUN, tool, detail=f"the run has no tool {tool}"
        )
        return CallDecision(tool, refused, ())
    if not _needs_analysis(layers, tool, env):
        # no layer has a rule that could meet this call: no per-layer verdicts to report
        return CallDecision(tool, Verdict(Effect.ALLOW, Reason.NO_CALL_RULES, tool), ())
    subject = build_subject(tool, args, env)
    verdicts = tuple([decide_layer(layer, subject) for layer in layers])
    if not subject.accesses:  # the common case: the layers say it all
        if len(verdicts) == 1:
            return CallDecision(tool, verdicts[0], verdicts)
        overall = (
            most_restrictive(verdicts)
            if verdicts
            else Verdict(Effect.ALLOW, Reason.NO_CALL_RULES, tool)
        )
        return CallDecision(tool, overall, verdicts)
    run_level: list[Verdict] = []
    for access_tool, part in subject.accesses[: subject.redirections]:
        if not env.has(access_tool):
            run_level.append(
                Verdict(
                    Effect.DENY,
                    Reason.TOOL_NOT_IN_RUN,
                    access_tool,
                    subject=part.text,
                    detail=_missing(tool, access_tool, env),
                )
            )
    combined = [*run_level, *verdicts]
    overall = (
        most_restrictive(combined)
        if combined
        else Verdict(Effect.ALLOW, Reason.NO_CALL_RULES, tool)
    )
    if overall.tool != tool and not overall.detail and tool in env.relations:
        # a related tool's rule decided: say which tool's call made it a call of that tool
        note = f"{tool} touches this file, so its call is decided as a {overall.tool} call too"
        overall = overall._replace(detail=note)
    return CallDecision(tool, overall, verdicts)


def _missing(tool: str, access_tool: str, env: CallEnvironment) -> str:
    if env.spec(tool).kind is ArgumentKind.SHELL and access_tool in (
        env.read_tool,
        env.write_tool,
    ):
        verb = "reads" if access_tool == env.read_tool else "writes"
        return f"the line {verb} a file, and the run has no tool {access_tool}"
    return (
        f"{tool}'s calls are also {access_tool} calls (catalog relation), and the run has no "
        f"tool {access_tool}"
    )
