"""One-layer call rules for the callaround tests (validate's checks, decisions)."""

from __future__ import annotations

from collections.abc import Sequence

from policyctl.callrules import (
    CallEnvironment,
    Effect,
    LayerCallRules,
    ToolCallRules,
    compile_rule,
)


def one_layer(
    env: CallEnvironment,
    tool: str,
    *,
    deny: Sequence[str] = (),
    ask: Sequence[str] = (),
    allow: Sequence[str] = (),
) -> tuple[LayerCallRules, ...]:
    spec = env.spec(tool)

    def rules(entries: Sequence[str], effect: Effect) -> tuple[object, ...]:
        return tuple(
            compile_rule(e, effect, spec, f"p.yaml:{i + 1}:1") for i, e in enumerate(entries)
        )

    tool_rules = ToolCallRules(
        tool,
        spec,
        deny=rules(deny, Effect.DENY),
        ask=rules(ask, Effect.ASK),
        allow=rules(allow, Effect.ALLOW),
        name_admitted=not allow,
    )
    return (LayerCallRules("tools.allow", {tool: tool_rules}),)
