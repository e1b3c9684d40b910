"""Catalogs as data: counts, derived groups and profiles, operator extension (catalogs.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from policyctl import PolicyError
from policyctl.catalog.load import builtin_catalog, load_catalog
from policyctl.catalog.model import data_dir


def test_openclaw_catalog_shape() -> None:
    cat = builtin_catalog("openclaw")
    assert len(cat.tools) == 67
    assert cat.tools[0].id == "decision_evaluate"
    assert [t.id for t in cat.tools[-7:]] == [
        "view_image",
        "image_generate",
        "music_generate",
        "video_generate",
        "transcripts",
        "tts",
        "pdf",
    ]


def test_openclaw_2026_4_and_nanobot_shapes() -> None:
    assert len(builtin_catalog("openclaw-2026.4").tools) == 32
    nano = builtin_catalog("nanobot")
    assert {t.id for t in nano.tools if t.read_only} == {
        "read_file",
        "list_dir",
        "grep",
        "find_files",
        "web_search",
        "web_fetch",
    }
    assert nano.profiles["readonly"] == (
        "read_file",
        "list_dir",
        "grep",
        "find_files",
        "web_search",
        "web_fetch",
    )
    assert nano.by_id["exec"].exclusive


def test_section_groups_are_derived_in_catalog_order() -> None:
    cat = builtin_catalog("openclaw")
    assert cat.groups["group:fs"] == ("ls", "read", "write", "edit", "apply_patch")
    assert cat.groups["group:runtime"] == ("exec", "process", "code_execution", "secrets")
    # agents has two blocks; the group keeps catalog order across both
    assert cat.groups["group:agents"][:2] == ("decision_evaluate", "agents_list")
    # transcripts opts out of its section group
    assert "transcripts" not in cat.groups["group:media"]
    assert "view_image" in cat.groups["group:media"]


def test_group_openclaw_excludes_file_and_shell_tools() -> None:
    members = set(builtin_catalog("openclaw").groups["group:openclaw"])
    assert {
        "ls",
        "read",
        "write",
        "edit",
        "apply_patch",
        "exec",
        "process",
        "canvas",
        "transcripts",
    }.isdisjoint(members)
    assert {"code_execution", "secrets", "browser", "show_widget", "gateway"} <= members


def test_profiles_are_derived() -> None:
    cat = builtin_catalog("openclaw")
    assert cat.profiles["minimal"] == ("presence", "session_status", "gateway")
    assert cat.profiles["full"] == ("*",)
    assert "bundle-mcp" in cat.profiles["coding"] and "bundle-mcp" in cat.profiles["messaging"]
    assert "message" in cat.profiles["messaging"] and "message" not in cat.profiles["coding"]
    assert "browser" not in cat.profiles["coding"]
    old = builtin_catalog("openclaw-2026.4")
    assert "bundle-mcp" not in old.profiles["coding"]
    assert old.profiles["minimal"] == ("session_status",)


def test_aliases_grants_owner_only_and_provider_aliases() -> None:
    cat = builtin_catalog("openclaw")
    assert cat.aliases["bash"] == "exec" and cat.aliases["cron"] == "automations"
    assert cat.aliases["update_plan"] == "progress_card" and cat.aliases["image"] == "view_image"
    assert cat.covers["canvas"] == ("canvas", "show_widget")
    assert cat.grants["apply_patch"][0].when_allowed == "write"
    assert cat.grants["skills_read"][0].unless_denied
    assert cat.owner_only == {"gateway", "automations", "nodes", "whatsapp_login"}
    assert cat.canonical_provider(" Bedrock ") == "amazon-bedrock"
    assert cat.image_tool == "view_image"
    assert builtin_catalog("openclaw-2026.4").image_tool == "image"


def test_builtin_catalog_files_carry_provenance() -> None:
    for name in ("openclaw", "openclaw-2026.4", "nanobot"):
        text = (data_dir("profiles") / f"{name}.toml").read_text(encoding="utf-8")
        assert text.startswith("# policyctl built-in catalog")
        assert "Provenance:" in text.split("\n\n")[0]


def test_operator_catalog_extends_builtin(tmp_path: Path) -> None:
    path = tmp_path / "ours.toml"
    path.write_text(
        'name = "ours"\nextends = "openclaw"\n'
        'tools = [{ id = "deploy", section = "ops", profiles = ["coding", "release"] }]\n'
        '[profiles.reviewer]\ntools = ["read", "group:web"]\n',
        encoding="utf-8",
    )
    cat = load_catalog("ours.toml", tmp_path)
    assert len(cat.tools) == 68
    assert cat.groups["group:ops"] == ("deploy",)
    assert cat.profiles["release"] == ("deploy",)
    assert cat.profiles["coding"][-2:] == ("deploy", "bundle-mcp")
    assert cat.profiles["reviewer"] == ("read", "group:web")
    assert cat.aliases["bash"] == "exec"  # inherited


def test_operator_catalog_typo_is_located(tmp_path: Path) -> None:
    path = tmp_path / "ours.toml"
    path.write_text('name = "ours"\nextends = "openclaw"\ntool = []\n', encoding="utf-8")
    with pytest.raises(PolicyError) as exc:
        load_catalog("ours.toml", tmp_path)
    d = exc.value.diagnostics[0]
    assert d.code == "PC305" and d.source is not None and d.source.line == 3
    assert d.fix == 'did you mean "tools"?'


def test_unknown_catalog_name() -> None:
    with pytest.raises(PolicyError) as exc:
        load_catalog("openclaw-2025")
    d = exc.value.diagnostics[0]
    assert d.code == "PC304" and "openclaw" in (d.fix or "")
