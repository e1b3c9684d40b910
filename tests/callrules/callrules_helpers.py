"""Builders for call-rule tests: layers from short dicts, a workspace with symlinks."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from policyctl.callrules import (
    CallDecision,
    CallEnvironment,
    Effect,
    LayerCallRules,
    Roots,
    ToolCallRules,
    compile_rule,
    decide_call,
    environment_for,
)
from policyctl.catalog.load import builtin_catalog

EFFECTS = {"allow": Effect.ALLOW, "ask": Effect.ASK, "deny": Effect.DENY}


def tool_rules(
    tool: str, env: CallEnvironment, rules: Mapping[str, Any], column: int = 1
) -> ToolCallRules:
    """`{"deny": [...], "ask": [...], "allow": [...], "name": bool, "default": "ask",
    "plain_ask": bool}`; `name` (admitted by a plain name) defaults to False when the dict has
    allow specifiers, else True. Rule i is written at `policy.yaml:i+1:column`."""
    spec = env.spec(tool)

    def compiled(key: str) -> tuple[Any, ...]:
        return tuple(
            compile_rule(e, EFFECTS[key], spec, f"policy.yaml:{i + 1}:{column}")
            for i, e in enumerate(rules.get(key, ()))
        )

    admitted = rules.get("name", not rules.get("allow"))
    return ToolCallRules(
        tool,
        spec,
        deny=compiled("deny"),
        ask=compiled("ask"),
        allow=compiled("allow"),
        name_admitted=admitted,
        name_entry=tool if admitted else None,
        plain_ask=tool if rules.get("plain_ask") else None,
        call_default=EFFECTS[rules.get("default", "deny")],
    )


def layer(label: str, env: CallEnvironment, **tools: Mapping[str, Any]) -> LayerCallRules:
    return LayerCallRules(label, {t: tool_rules(t, env, r) for t, r in tools.items()})


def make_workspace(base: Path) -> tuple[Path, Path]:
    """ws/ with src/, secrets/, docs/ and symlinks; home/ with .ssh/. Returns (ws, home)."""
    ws, home, outside = base / "ws", base / "home", base / "outside"
    for d in (ws / "src", ws / "secrets" / "sub", ws / "docs", home / ".ssh", outside):
        d.mkdir(parents=True, exist_ok=True)
    for f in (
        ws / "src" / "main.py",
        ws / "secrets" / "key",
        ws / "secrets" / "sub" / "deep",
        ws / "docs" / "guide.md",
        ws / "README.md",
        ws / ".env",
        home / ".ssh" / "id_rsa",
        outside / "data.txt",
        outside / ".env",
    ):
        f.write_text("x", encoding="utf-8")
    links = {
        ws / "link_to_secrets": ws / "secrets",
        ws / "src" / "evil.py": ws / "secrets" / "key",
        ws / "src" / "escape": outside / "data.txt",
        ws / "src" / "innocent.txt": outside / ".env",
        ws / "src" / "loop": ws / "src" / "loop",
        ws / "src" / "deep": ws / "secrets" / "sub",
    }
    for link, target in links.items():
        if not link.is_symlink():
            os.symlink(target, link)
    return ws.resolve(), home.resolve()


def env_for(
    catalog: str = "openclaw",
    roots: Roots | None = None,
    run_tools: frozenset[str] | None = None,
) -> CallEnvironment:
    return environment_for(builtin_catalog(catalog), roots or Roots(None, None), run_tools)


def decide(
    layers: Sequence[LayerCallRules], tool: str, args: Mapping[str, Any], env: CallEnvironment
) -> CallDecision:
    return decide_call(layers, tool, args, env)
