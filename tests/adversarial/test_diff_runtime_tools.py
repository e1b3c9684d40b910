"""`diff --fail-on-widen` sees changes that concern only tools a runtime connects and no file
declares: MCP tools, plugin tools, a server's glob, a plugin id."""

from __future__ import annotations

from pathlib import Path

import pytest

from policyctl.cli.main import main

BASE = "catalog: openclaw\ntools:\n  profile: coding\n"
FULL = "catalog: openclaw\ntools:\n  profile: full\n"


@pytest.mark.parametrize(
    "old, new",
    [
        (BASE + "  deny: [bundle-mcp, group:plugins]\n", BASE),
        (BASE + '  deny: ["github__*"]\n', BASE),
        # (the coding profile leaves plugin tools out: under `full` a plugin-id deny decides)
        (FULL + "  deny: [shelly]\n", FULL),
        (
            "catalog: openclaw\ntools:\n  allow: [read]\n",
            "catalog: openclaw\ntools:\n  allow: [read, bundle-mcp]\n",
        ),
        (
            "catalog: openclaw\ntools:\n  allow: [read]\n",
            "catalog: openclaw\ntools:\n  allow: [read, group:plugins]\n",
        ),
        (
            "catalog: openclaw\ntools:\n  allow: [read]\n",
            'catalog: openclaw\ntools:\n  allow: [read, "shell_*"]\n',
        ),
    ],
    ids=[
        "deny-bundle-mcp",
        "deny-server-glob",
        "deny-plugin-id",
        "allow-bundle-mcp",
        "allow-plugins",
        "allow-glob",
    ],
)
def test_a_widening_of_undeclared_tools_is_a_widening(tmp_path: Path, old: str, new: str) -> None:
    (tmp_path / "old.yaml").write_text(old, encoding="utf-8")
    (tmp_path / "new.yaml").write_text(new, encoding="utf-8")
    args = ["diff", str(tmp_path / "old.yaml"), str(tmp_path / "new.yaml"), "--fail-on-widen"]
    assert main(args) == 1
    # and the other way round it narrows: nothing gained
    back = ["diff", str(tmp_path / "new.yaml"), str(tmp_path / "old.yaml"), "--fail-on-widen"]
    assert main(back) == 0


def test_the_same_policy_compares_equal(tmp_path: Path) -> None:
    text = BASE + '  deny: [bundle-mcp, "github__*", shelly, "x*"]\n'
    (tmp_path / "p.yaml").write_text(text, encoding="utf-8")
    assert (
        main(["diff", str(tmp_path / "p.yaml"), str(tmp_path / "p.yaml"), "--fail-on-widen"]) == 0
    )


def test_more_changed_plugin_entries_than_stand_ins_is_inconclusive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from policyctl.analysis import probes

    monkeypatch.setattr(probes, "MAX_PROBES", 2)
    write = tmp_path.joinpath
    write("old.yaml").write_text(FULL + "  deny: [p1, p2, p3]\n", encoding="utf-8")
    write("new.yaml").write_text(FULL + "  deny: [p1, p2, p3, q1, q2, q3]\n", encoding="utf-8")
    args = ["diff", str(write("old.yaml")), str(write("new.yaml")), "--fail-on-widen"]
    assert main(args) == 1  # three changed entries, two stand-ins: not a pass
    assert main([*args, "--allow-sampled"]) == 0
    # a dropped deny is stood in for first, whatever its name: found despite the cap
    write("new.yaml").write_text(FULL + "  deny: [a1, a2, a3]\n", encoding="utf-8")
    assert main([*args, "--allow-sampled"]) == 1


PLUGIN = "inventory:\n  plugins:\n    - {name: shelly_read, pluginId: shelly}\n"


@pytest.mark.parametrize(
    "old, new",
    [
        # a plugin-id deny narrowed to the one tool of the plugin the file declares
        (FULL + "  deny: [shelly]\n" + PLUGIN, FULL + "  deny: [shelly_read]\n" + PLUGIN),
        # a literal deny of an MCP tool dropped where every MCP tool is allowed
        (
            "tools:\n  allow: [read, bundle-mcp]\n  deny: [github__delete_repo]\n",
            "tools:\n  allow: [read, bundle-mcp]\n",
        ),
        # a call-rule deny, and a plain ask, on a tool only the runtime has
        (FULL + '  deny: ["deploy(*)"]\n', FULL),
        (FULL + "  ask: [deploy]\n", FULL),
    ],
    ids=["plugin-id-narrowed", "mcp-literal", "call-rule", "plain-ask"],
)
def test_more_widenings_of_undeclared_tools(tmp_path: Path, old: str, new: str) -> None:
    (tmp_path / "old.yaml").write_text(old, encoding="utf-8")
    (tmp_path / "new.yaml").write_text(new, encoding="utf-8")
    args = ["diff", str(tmp_path / "old.yaml"), str(tmp_path / "new.yaml"), "--fail-on-widen"]
    assert main(args) == 1
