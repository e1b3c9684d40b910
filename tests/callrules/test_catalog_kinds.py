"""Argument kinds are catalog data, for all three built-in catalogs, with a strict schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from policyctl import PolicyError
from policyctl.callrules import ArgumentKind, Roots, environment_for
from policyctl.catalog.load import builtin_catalog, catalog_from_definition, load_catalog

EXPECTED = {
    "openclaw": {
        "exec": ("shell", "command", "workdir"),
        "read": ("path", "path", None),
        "write": ("path", "path", None),
        "edit": ("path", "path", None),
        "ls": ("path", "path", None),
        "apply_patch": ("patch", "input", None),
        "web_fetch": ("url", "url", None),
        "skills_read": ("path", "path", None),
    },
    "openclaw-2026.4": {
        "exec": ("shell", "command", "workdir"),
        "read": ("path", "path", None),
        "write": ("path", "path", None),
        "edit": ("path", "path", None),
        "apply_patch": ("patch", "input", None),
        "web_fetch": ("url", "url", None),
    },
    "nanobot": {
        "exec": ("shell", "command", "working_dir"),
        "read_file": ("path", "path", None),
        "write_file": ("path", "path", None),
        "edit_file": ("path", "path", None),
        "list_dir": ("path", "path", None),
        "apply_patch": ("patch", "patch", None),
        "web_fetch": ("url", "url", None),
    },
}
ACCESS_TOOLS = {
    "openclaw": ("read", "write"),
    "openclaw-2026.4": ("read", "write"),
    "nanobot": ("read_file", "write_file"),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_builtin_catalogs_declare_argument_kinds(name: str) -> None:
    cat = builtin_catalog(name)
    kinds = {
        t.id: (t.argument_kind, t.argument_key, t.cwd_key) for t in cat.tools if t.argument_kind
    }
    assert kinds == EXPECTED[name]
    assert (cat.call_read_tool, cat.call_write_tool) == ACCESS_TOOLS[name]
    env = environment_for(cat, Roots("/w", "/h"))
    assert env.spec("exec").kind is ArgumentKind.SHELL
    assert env.spec("message").kind is ArgumentKind.KEYED  # no kind declared: keyed only
    assert (env.read_tool, env.write_tool) == ACCESS_TOOLS[name]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bundled_definition_carries_the_kinds(name: str) -> None:
    cat = builtin_catalog(name)
    again = catalog_from_definition([dict(d) for d in cat.definition])
    assert again.by_id["exec"].argument_kind == "shell"
    assert again.call_write_tool == cat.call_write_tool


def _catalog(tmp_path: Path, row: str, extra: str = "") -> Path:
    path = tmp_path / "cat.toml"
    path.write_text(
        f'name = "mine"\nextends = "openclaw"\n{extra}\ntools = [\n  {row}\n]\n', encoding="utf-8"
    )
    return path


def test_operator_catalog_adds_a_kind(tmp_path: Path) -> None:
    path = _catalog(
        tmp_path,
        '{ id = "deploy", section = "runtime", argument_kind = "shell", argument_key = "cmd" }',
    )
    cat = load_catalog(str(path))
    assert cat.by_id["deploy"].argument_kind == "shell"
    assert cat.call_read_tool == "read"  # inherited from the base catalog


@pytest.mark.parametrize(
    "row",
    [
        '{ id = "t", section = "x", argument_kind = "regex", argument_key = "a" }',
        '{ id = "t", section = "x", argument_kind = "shell" }',
        '{ id = "t", section = "x", argument_key = "a" }',
        '{ id = "t", section = "x", cwd_key = "d" }',
        '{ id = "t", section = "x", argument_kind = "path", argument_key = "p", argumnt = 1 }',
    ],
)
def test_bad_kind_rows_are_errors(tmp_path: Path, row: str) -> None:
    with pytest.raises(PolicyError) as caught:
        load_catalog(str(_catalog(tmp_path, row)))
    (diag,) = caught.value.diagnostics
    assert diag.code in {"PC202", "PC203", "PC305"}  # a bad value, a bad choice, a bad key
    assert diag.source is not None and diag.source.line == 5  # the row, after the blank line


def test_unknown_catalog_key_stays_an_error(tmp_path: Path) -> None:
    path = _catalog(tmp_path, '{ id = "t", section = "x" }', 'call_reed_tool = "read"')
    with pytest.raises(PolicyError):
        load_catalog(str(path))
