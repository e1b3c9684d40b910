"""The reference tools as the catalog describes them: nanobot's names, exec taking the command
line its call rules decide (`command`, `working_dir`), and `~` meaning one home in the rules
and in exec's environment."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from policyctl import load_policy_text, resolve
from policyctl.catalog.load import builtin_catalog
from policyctl.context import RunContext
from policyctl.runtime import CallGate, ToolRegistry, make_builtin_tools


def _roots(tmp_path: Path) -> tuple[Path, Path]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / "sub").mkdir(parents=True)
    home.mkdir()
    return ws, home


def _gate(ws: Path, home: Path | None, tools: str = "") -> CallGate:
    policy = load_policy_text(f"catalog: nanobot\n{tools}")
    registry = ToolRegistry(make_builtin_tools(ws))
    ctx = RunContext(workspace=str(ws), home=None if home is None else str(home))
    return CallGate(resolve(policy, ctx, registry.inventory(policy.catalog)), registry)


def test_every_reference_tool_is_named_and_shaped_as_the_catalog_says(tmp_path: Path) -> None:
    catalog = builtin_catalog("nanobot")
    by_id = {t.id: t for t in catalog.tools}
    for made in make_builtin_tools(tmp_path):
        assert made.name in by_id, made.name
        entry = by_id[made.name]
        properties = made.parameters.get("properties", {})
        for key in (entry.argument_key, entry.cwd_key):
            if key is not None:
                assert key in properties, (made.name, key)
    shape = {t.name: t.parameters for t in make_builtin_tools(tmp_path)}["exec"]
    assert shape["properties"]["command"]["type"] == "string"  # the text the rules decide


def test_exec_home_is_the_runs_home(tmp_path: Path) -> None:
    ws, home = _roots(tmp_path)
    out = asyncio.run(_gate(ws, home).call("exec", {"command": "echo ~; echo $HOME; pwd"}))
    assert out.ok, out.content()
    assert out.result["stdout"].split() == [str(home.resolve()), str(home.resolve()), str(ws)]


def test_exec_home_without_a_run_home_is_the_workspace(tmp_path: Path) -> None:
    ws, _ = _roots(tmp_path)
    out = asyncio.run(_gate(ws, None).call("exec", {"command": "echo $HOME"}))
    assert out.ok and out.result["stdout"].strip() == str(ws.resolve())


def test_a_rule_on_tilde_meets_what_exec_writes_there(tmp_path: Path) -> None:
    """The redirection's `~` is decided against the run's home, and bash expands it to exec's
    HOME: the same directory, so the rule protects the file the command would write."""
    ws, home = _roots(tmp_path)
    gate = _gate(ws, home, 'tools:\n  deny: ["write_file(~/.bashrc)"]\n')
    out = asyncio.run(gate.call("exec", {"command": "echo evil > ~/.bashrc"}))
    assert out.veto is not None and out.veto.kind == "policy"
    assert not (home / ".bashrc").exists() and not (ws / ".bashrc").exists()
    ok = asyncio.run(gate.call("exec", {"command": "echo fine > ~/notes"}))
    assert ok.ok and (home / "notes").read_text() == "fine\n"


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        ({"command": "pwd", "working_dir": "sub"}, "sub"),
        ({"command": "pwd", "working_dir": "."}, ""),
        ({"command": "pwd", "working_dir": "../.."}, None),
        ({"command": "pwd", "working_dir": "/"}, None),
        ({"command": "pwd", "working_dir": "missing"}, None),
    ],
)
def test_exec_working_dir_is_confined_to_the_workspace(
    tmp_path: Path, args: dict[str, Any], expect: str | None
) -> None:
    ws, home = _roots(tmp_path)
    out = asyncio.run(_gate(ws, home).call("exec", args))
    if expect is None:
        assert not out.ok
        return
    assert out.ok, out.content()
    assert out.result["stdout"].strip() == os.path.join(str(ws.resolve()), expect).rstrip("/")
