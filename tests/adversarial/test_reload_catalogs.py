"""Hot reload sees every file the compile read: the operator catalog, the catalogs it extends,
and a catalog named by an extended file (relative to that file). A revoked tool must not stay
callable because its catalog was not watched."""

from __future__ import annotations

import os
from pathlib import Path

from policyctl import RunContext, load_policy, resolve
from policyctl.runtime.store import PolicyStore

CTX = RunContext()
REVIEWER = "tools:\n  profile: reviewer\n"


def _replace(path: Path, text: str) -> None:
    """The README's way to change a policy file: write a temporary file, then rename."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _catalog(name: str, extends: str, tools: str | None) -> str:
    text = f'name = "{name}"\nextends = "{extends}"\n'
    return text + (f"\n[profiles.reviewer]\ntools = {tools}\n" if tools else "")


def test_revoking_a_tool_in_a_catalog_the_operator_catalog_extends(tmp_path: Path) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text(f"catalog: ./ours.toml\n{REVIEWER}", encoding="utf-8")
    (tmp_path / "ours.toml").write_text(_catalog("ours", "./base.toml", None), encoding="utf-8")
    base = tmp_path / "base.toml"
    base.write_text(_catalog("base", "openclaw", '["read", "exec"]'), encoding="utf-8")
    store = PolicyStore(policy, settle=0)
    assert "exec" in store.resolve(CTX).allowed
    _replace(base, _catalog("base", "openclaw", '["read"]'))
    assert store.check() is True
    assert "exec" not in store.resolve(CTX).allowed
    assert store.resolve(CTX).allowed == resolve(load_policy(policy), CTX).allowed


def test_a_catalog_named_by_an_extended_file_is_watched(tmp_path: Path) -> None:
    # `catalog:` is relative to the file that names it: here shared/, not the policy's folder
    policy = tmp_path / "p.yaml"
    policy.write_text("extends: ./shared/base.yaml\n", encoding="utf-8")
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "base.yaml").write_text(f"catalog: ./cat.toml\n{REVIEWER}", encoding="utf-8")
    cat = shared / "cat.toml"
    cat.write_text(_catalog("cat", "openclaw", '["read", "exec"]'), encoding="utf-8")
    store = PolicyStore(policy, settle=0)
    assert "exec" in store.resolve(CTX).allowed
    _replace(cat, _catalog("cat", "openclaw", '["read"]'))
    assert store.check() is True
    assert "exec" not in store.resolve(CTX).allowed


def test_a_missing_catalog_base_that_appears_is_loaded(tmp_path: Path) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text(f"catalog: ./ours.toml\n{REVIEWER}", encoding="utf-8")
    (tmp_path / "ours.toml").write_text(_catalog("ours", "./base.toml", None), encoding="utf-8")
    errors: list[object] = []
    store = PolicyStore(policy, settle=0, on_error=errors.append)
    assert store.version == 0 and errors  # base.toml is missing: nothing in service
    _replace(tmp_path / "base.toml", _catalog("base", "openclaw", '["read"]'))
    assert store.check() is True and store.version == 1
    assert "read" in store.resolve(CTX).allowed
