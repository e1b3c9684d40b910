"""The MCP marker cannot be forged: `allow: [bundle-mcp]` grants MCP tools, never a plugin's.

Policies grant every MCP tool with one entry, `bundle-mcp`, which matches tools whose plugin
id is `bundle-mcp`. Any code could set that id on a tool of its own (a `RuntimeTool`, an
`@tool`, a `Tool`, a stand-in object) and ride on those entries. Only the runtime's MCP code
(`policyctl.runtime.mcp`) and `Tool.mcp` may make such tools; a plugin registering through
`PluginTools` never can, and the registry and the inventory refuse a forged marker (PC313).
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import itertools
import json
import pickle
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policyctl import load_policy_text, resolve
from policyctl.catalog.inventory import Inventory, Tool
from policyctl.runtime import RuntimeTool, ToolRegistry, tool
from policyctl.runtime.mcp import as_mcp_tool, is_mcp_tool, mcp_tools
from policyctl.runtime.plugins import PluginTools

POLICY = "catalog: openclaw\ntools: {allow: [read, bundle-mcp]}\n"
SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


async def _run(**_: Any) -> str:
    return "deployed"


async def _call(name: str, arguments: dict[str, Any]) -> Any:
    return {"content": [{"type": "text", "text": f"{name} ran"}]}


def _github() -> list[RuntimeTool]:
    return mcp_tools("github", [{"name": "create_pr"}], _call)


def _allowed(registry: ToolRegistry) -> tuple[str, ...]:
    policy = load_policy_text(POLICY)
    return resolve(policy, None, registry.inventory(policy.catalog)).allowed


#: spellings of the marker that every consumer folds to `bundle-mcp`
MARKERS = ["bundle-mcp", "Bundle-MCP", " bundle-mcp", "BUNDLE-MCP\t"]


@pytest.mark.parametrize("marker", MARKERS)
def test_a_runtime_tool_cannot_be_made_with_the_marker(marker: str) -> None:
    with pytest.raises(ValueError, match="marks MCP tools"):
        RuntimeTool("deploy_prod", "deploy", SCHEMA, _run, plugin_id=marker)
    with pytest.raises(ValueError, match="marks MCP tools"):
        tool("deploy_prod", plugin_id=marker)(_run)


def test_a_copy_of_an_mcp_tool_is_not_an_mcp_tool() -> None:
    (real,) = _github()
    with pytest.raises(ValueError, match="marks MCP tools"):
        dataclasses.replace(real, execute=_run)  # its name, a hostile body
    assert is_mcp_tool(real) and not is_mcp_tool(copy.copy(real))


def _overwritten(name: str = "deploy_prod") -> RuntimeTool:
    made = RuntimeTool(name, "deploy", SCHEMA, _run, plugin_id="ops")
    object.__setattr__(made, "plugin_id", "bundle-mcp")
    return made


def _subclassed(name: str = "deploy_prod") -> RuntimeTool:
    class Sneaky(RuntimeTool):
        def __post_init__(self) -> None:  # skips the constructor's refusal
            object.__setattr__(self, "checked_schema", SCHEMA)
            object.__setattr__(self, "accept", None)

    return Sneaky(name, "deploy", SCHEMA, _run, plugin_id="bundle-mcp")


def _copied(name: str = "") -> RuntimeTool:
    made = copy.copy(mcp_tools("gitlab", [{"name": "x"}], _call)[0])
    if name:
        object.__setattr__(made, "name", name)
    return made


FORGERIES = {"overwritten": _overwritten, "subclassed": _subclassed, "copied": _copied}


@pytest.mark.parametrize("forge", FORGERIES)
def test_the_registry_refuses_a_forged_marker(forge: str) -> None:
    """F-mcp: a plugin tool with `plugin_id` written to `bundle-mcp` was allowed by
    `allow: [bundle-mcp]` and ran."""
    forged = FORGERIES[forge]()
    registry = ToolRegistry()
    with pytest.raises(ValueError, match=r"not made by policyctl\.runtime\.mcp.*PC313"):
        registry.register(forged)
    assert forged.name not in registry
    registry.register(_github()[0])  # the real MCP tool still rides on the entry
    assert _allowed(registry) == ("github__create_pr",)


def test_real_mcp_tools_are_granted_by_the_entry() -> None:
    registry = ToolRegistry(_github())
    registry.register(as_mcp_tool(RuntimeTool("jira__open", "open", SCHEMA, _run)))
    assert _allowed(registry) == ("github__create_pr", "jira__open")
    with pytest.raises(ValueError, match="belongs to plugin"):
        as_mcp_tool(RuntimeTool("voice_call", "call", SCHEMA, _run, plugin_id="voice"))


def test_a_plugin_registers_only_its_own_tools() -> None:
    registry = ToolRegistry()
    voice = PluginTools(registry, "voice")
    voice.register(RuntimeTool("voice_call", "call", SCHEMA, _run, plugin_id="voice"))
    for foreign in (
        _github()[0],  # it imported the MCP module: still not its tool to register
        RuntimeTool("deploy_prod", "deploy", SCHEMA, _run, plugin_id="ops"),
        RuntimeTool("read", "read", SCHEMA, _run),
        _overwritten(),
    ):
        with pytest.raises(ValueError, match="must be a RuntimeTool of plugin_id 'voice'"):
            voice.register(foreign)
    registry.register(RuntimeTool("read", "read", SCHEMA, _run))
    with pytest.raises(ValueError, match="not its own"):
        voice.register(RuntimeTool("read", "x", SCHEMA, _run, plugin_id="voice"), replace=True)
    voice.unregister("read")  # not its own: left alone
    assert list(_allowed(registry)) == ["read"]


@pytest.mark.parametrize("plugin_id", [*MARKERS, "group:fs", "*", "", "Voice"])
def test_a_plugin_handle_cannot_take_a_reserved_id(plugin_id: str) -> None:
    with pytest.raises(ValueError, match="plugin id"):
        PluginTools(ToolRegistry(), plugin_id)


# -- the Python API's inventory ---------------------------------------------------------------


@pytest.mark.parametrize("marker", MARKERS)
def test_a_tool_cannot_be_made_with_the_marker(marker: str) -> None:
    real = Tool.mcp("gh__pr")
    with pytest.raises(ValueError, match=r"Tool\.mcp"):
        Tool("gh__pr", marker)  # the intern table would hand back the real one
    assert real.is_mcp and pickle.loads(pickle.dumps(real)) is real


@dataclasses.dataclass(frozen=True)
class StandIn:
    name: str
    plugin_id: str | None = None
    optional: bool = False


def _forged_tool() -> Tool:
    made = Tool("deploy_prod", "ops")
    object.__setattr__(made, "plugin_id", "bundle-mcp")
    return made


@pytest.mark.parametrize("forged", ["stand-in", "overwritten", "folded stand-in"])
def test_an_inventory_drops_a_forged_marker(forged: str) -> None:
    fake: Any = {
        "stand-in": StandIn("deploy_prod", "bundle-mcp"),
        "overwritten": _forged_tool(),
        "folded stand-in": StandIn("deploy_prod", " Bundle-MCP"),
    }[forged]
    policy = load_policy_text(POLICY)
    run = resolve(policy, None, [Tool("read"), fake, Tool.mcp("gh__pr")])
    assert set(run.allowed) == {"gh__pr", "read"}
    assert "PC313" in [d.code for d in run.warnings]
    with pytest.raises(ValueError, match="PC313"):
        Inventory((Tool("read"), fake))  # made directly, bypassing build


def test_the_cli_inventory_still_describes_mcp_tools(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from policyctl.cli.main import main

    listing = tmp_path / "tools.json"
    listing.write_text('["read", {"name": "gh__pr", "pluginId": "Bundle-MCP"}]')
    policy = tmp_path / "p.yaml"
    policy.write_text(POLICY)
    given = ["resolve", str(policy), "--format", "json", "--tool-inventory", str(listing)]
    assert main([*given, "--add-tool", "jira__x@bundle-mcp"]) == 0
    assert json.loads(capsys.readouterr().out)["allowed"] == ["read", "gh__pr", "jira__x"]


# -- the class: whatever a plugin does, the entry grants only real MCP tools -------------------

PLUGIN_IDS = st.one_of(
    st.sampled_from([*MARKERS, "voice", "ops", "mcp", "bundle_mcp"]),
    st.text(alphabet="bundle-mcpBUNDLE \t", min_size=1, max_size=14),
)


@given(
    st.lists(st.tuples(st.sampled_from([*FORGERIES, "plain"]), PLUGIN_IDS), min_size=1, max_size=6)
)
def test_bundle_mcp_grants_only_what_the_mcp_code_made(attempts: list[tuple[str, str]]) -> None:
    registry = ToolRegistry(_github())
    for i, (how, plugin_id) in enumerate(attempts):
        name = f"plugin_tool{i}"
        try:
            if how == "plain":
                made = RuntimeTool(name, name, SCHEMA, _run, plugin_id=plugin_id)
            else:
                made = FORGERIES[how](name)
        except ValueError:
            continue  # refused at construction
        try:
            registry.register(made)
        except ValueError:
            continue  # refused by the registry
        assert made.plugin_id is None or made.plugin_id.strip().lower() != "bundle-mcp"
    assert _allowed(registry) == ("github__create_pr",)
    outcome = asyncio.run(registry.get("github__create_pr").execute())  # type: ignore[union-attr]
    assert outcome == "create_pr ran"


_FRESH = itertools.count()


@given(st.lists(st.tuples(st.sampled_from(["tool", "stand-in", "overwritten"]), PLUGIN_IDS)))
def test_an_inventory_grants_only_tools_made_by_tool_mcp(attempts: list[tuple[str, str]]) -> None:
    """Fresh names in every example: a tool whose fields are written with `object.__setattr__`
    after it went into an inventory is outside what any check can see (such code can write the
    compiled policy just as well); written before, it is refused."""
    given_tools: list[Any] = [Tool.mcp("gh__pr")]
    for how, plugin_id in attempts:
        name = f"plugin_tool{next(_FRESH)}"
        if how == "stand-in":
            given_tools.append(StandIn(name, plugin_id))
            continue
        try:
            made = Tool(name, "ops" if how == "overwritten" else plugin_id)
        except ValueError:
            continue
        if how == "overwritten":
            object.__setattr__(made, "plugin_id", plugin_id)
        given_tools.append(made)
    policy = load_policy_text("catalog: openclaw\ntools: {allow: [bundle-mcp]}\n")
    assert resolve(policy, None, given_tools, require_tools=False).allowed == ("gh__pr",)
