"""Tools are interned and inventories remembered: a new list of the same tools (a registry
rebuilt after an MCP reconnect) finds the inventory built before, per catalog, and nothing a
caller can change afterwards is ever remembered."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from policyctl import Inventory, RunContext, Tool, load_policy, resolve
from policyctl.api import load_policy_text
from policyctl.catalog.load import builtin_catalog
from policyctl.pipeline import match
from policyctl.runtime.registry import ToolRegistry
from policyctl.runtime.tools import RuntimeTool

OPENCLAW = builtin_catalog("openclaw")
NANOBOT = builtin_catalog("nanobot")


def mcp(n: int, salt: str = "") -> list[Tool]:
    return [Tool.mcp(f"srv__tool{i}{salt}") for i in range(n)]


def test_tools_of_equal_content_are_one_immutable_object() -> None:
    one = Tool.mcp("srv__a")
    assert Tool.mcp("srv__a") is one
    assert Tool("srv__a") is not one and Tool.mcp("srv__a", True) is not one
    assert copy.deepcopy(one) is one and pickle.loads(pickle.dumps(one)) is one
    assert {one: 1}[Tool.mcp("srv__a")] == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.name = "exec"  # type: ignore[misc]
    with pytest.raises(TypeError):

        class Wider(Tool):  # a subclass would receive interned base objects
            pass


def test_a_new_list_of_the_same_tools_is_not_built_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    policy = load_policy_text("catalog: openclaw\ntools: {deny: [exec]}\n")
    built: list[int] = []
    real = Inventory.build

    def counting(tools: object, catalog: object) -> Inventory:
        built.append(1)
        return real(tools, catalog)  # type: ignore[arg-type]

    monkeypatch.setattr(Inventory, "build", staticmethod(counting))
    ctx = RunContext(provider="openai")
    first = resolve(policy, ctx, [Tool("read"), *mcp(50, "memo")])
    again = resolve(policy, ctx, [Tool("read"), *mcp(50, "memo")])  # new list, same tools
    assert len(built) == 1 and again.allowed == first.allowed
    resolve(policy, ctx, [*mcp(50, "memo"), Tool("read")])  # another order: another inventory
    assert len(built) == 2


def test_remembered_inventories_are_per_catalog() -> None:
    # plugin id `browser` is a core tool's name in openclaw (refused, PC383), not in nanobot
    tools = [Tool("helper", "browser")]
    strict, loose = Inventory.of(tools, OPENCLAW), Inventory.of(list(tools), NANOBOT)
    assert [d.code for d in strict.conflicts] == ["PC383"] and not strict.tools
    assert not loose.conflicts and loose.names == {"helper"}
    assert Inventory.of(list(tools), OPENCLAW) is strict


def test_entry_syntax_names_stay_refused_when_the_list_is_remembered() -> None:
    tools = [Tool("read"), Tool.mcp("*"), Tool("group:plugins", "x"), Tool("x__y", "x")]
    for _ in range(2):  # built, then remembered
        inv = Inventory.of(list(tools), OPENCLAW)
        assert inv.names == {"read", "x__y"}
        assert [d.code for d in inv.conflicts] == ["PC381", "PC381"]


def test_stand_in_tools_are_built_every_time() -> None:
    """An object that only looks like a tool may change after it was seen: never remembered."""

    @dataclasses.dataclass(eq=False)
    class Mutable:
        name: str
        plugin_id: str | None = None
        optional: bool = False

    tool = Mutable("srv__fine", "srv")
    assert Inventory.of([tool], OPENCLAW).names == {"srv__fine"}  # type: ignore[list-item]
    tool.name = "*"
    again = Inventory.of([tool], OPENCLAW)  # type: ignore[list-item]
    assert not again.names and [d.code for d in again.conflicts] == ["PC381"]


async def _noop(**_: object) -> str:
    return ""


def _registry(*names: str) -> ToolRegistry:
    schema = {"type": "object", "properties": {}}
    return ToolRegistry([RuntimeTool(n, n, schema, _noop, plugin_id="browser") for n in names])


def test_a_rebuilt_registry_hands_over_the_inventory_already_built() -> None:
    before = _registry("srv__a", "srv__b").inventory(NANOBOT)
    assert _registry("srv__a", "srv__b").inventory(NANOBOT) is before


def test_the_registry_inventory_follows_the_catalog_it_is_asked_for() -> None:
    registry = _registry("srv__a")
    assert registry.inventory(NANOBOT).names == {"srv__a"}
    assert not registry.inventory(OPENCLAW).names  # plugin id `browser` is core in openclaw


def test_a_reloaded_policy_shares_the_inventory_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """The index depends on the inventory and the catalog only: a hot reload's first resolve
    finds it built (the verdicts, which depend on the policy, are not shared)."""
    path = __import__("conftest").EXAMPLES / "team.yaml"
    tools = [Tool("read"), *mcp(300, "reload")]
    resolve(load_policy(path), RunContext(agent="coder"), tools, require_tools=False)
    built: list[int] = []
    real = match.InventoryIndex.build

    def counting(inventory: Inventory, catalog: object) -> match.InventoryIndex:
        built.append(1)
        return real(inventory, catalog)  # type: ignore[arg-type]

    monkeypatch.setattr(match.InventoryIndex, "build", staticmethod(counting))
    fresh = load_policy(path)
    res = resolve(fresh, RunContext(agent="coder"), list(tools), require_tools=False)
    assert not built
    assert res.allowed == resolve(fresh, RunContext(agent="coder"), list(tools)).allowed


def test_threads_making_the_same_tool_get_one_object() -> None:
    import threading

    made: list[list[Tool]] = [[] for _ in range(8)]
    start = threading.Barrier(8)

    def worker(k: int) -> None:
        start.wait()
        made[k].extend(Tool.mcp(f"srv__race{i}") for i in range(2000))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(2000):
        assert len({id(m[i]) for m in made}) == 1
