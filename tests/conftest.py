"""Shared helpers: write a policy into a temporary folder, compile it, resolve a run."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from policyctl import CompiledPolicy, RunContext, Sender, load_policy, resolve
from policyctl.catalog.inventory import Tool
from policyctl.pipeline.result import Resolution

# CI explores a fixed sequence of examples, so a submission's result does not depend on luck;
# local runs explore new ones every time (and `POLICYCTL_FUZZ_EXAMPLES` makes them longer).
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

MakePolicy = Callable[..., CompiledPolicy]


@pytest.fixture
def make_policy(tmp_path: Path) -> MakePolicy:
    """make_policy(text, name="policy.yaml", **other_files) -> CompiledPolicy."""

    def make(text: str, name: str = "policy.yaml", **files: str) -> CompiledPolicy:
        for fname, content in files.items():
            (tmp_path / fname.replace("__", ".")).write_text(
                textwrap.dedent(content), encoding="utf-8"
            )
        path = tmp_path / name
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return load_policy(path)

    return make


def ctx(sender: dict[str, str] | None = None, **fields: Any) -> RunContext:
    return RunContext(sender=Sender(**(sender or {})), **fields)


def run(
    policy: CompiledPolicy,
    inventory: Iterable[Tool] | None = None,
    *,
    require_tools: bool = True,
    **fields: Any,
) -> Resolution:
    sender = fields.pop("sender", None)
    return resolve(policy, ctx(sender, **fields), inventory, require_tools=require_tools)


def tools(*names: str, plugin: str | None = None, optional: bool = False) -> list[Tool]:
    if plugin == "bundle-mcp":  # the host's MCP tools: only Tool.mcp makes them
        return [Tool.mcp(n, optional) for n in names]
    return [Tool(n, plugin, optional) for n in names]


def removed_at(res: Resolution, tool: str) -> int | None:
    r = res.removal(tool)
    return None if r is None else r.stage


# The real-nanobot tests run inside an environment of their own
# (tests/integrations/test_nanobot.py builds it and runs them there).
collect_ignore = ["integrations/nanobot_real"]
