"""What start-up skips must not change an answer: the built-in catalogs read without source
positions are the catalogs read with them, and a problem still gets its located diagnostic."""

from __future__ import annotations

from dataclasses import replace

import pytest

from policyctl.catalog import load as cat
from policyctl.catalog.file import CatalogFile
from policyctl.settings import Limits


@pytest.mark.parametrize("name", cat.BUILTIN_CATALOGS)
def test_builtin_catalogs_read_alike_with_and_without_positions(name: str) -> None:
    """The runtime reads a built-in catalog's TOML without validating it (its own data): each
    must be a valid `CatalogFile`, and derive the catalog the validated, located reading
    derives, omitted fields taking the model's defaults."""
    path = cat.data_dir("profiles") / f"{name}.toml"
    text = path.read_text(encoding="utf-8")
    fast = cat._builtin_file(text)
    assert fast is not None
    CatalogFile.model_validate(fast)
    located = cat._read_catalog_file(path, Limits(), name)
    assert located == CatalogFile.model_validate(fast).model_dump()
    quick, checked = cat._derive([fast]), cat._derive([located])
    assert replace(quick, files=()) == replace(checked, files=())
    assert quick.definition == checked.definition


@pytest.mark.parametrize(
    "text",
    [
        'name = "x"\ntools = [{id = "read", section = "fs"}\n',  # TOML syntax
        'name = "x"\ntools = [{id = "r\u0435ad", section = "fs"}]\n',  # a Cyrillic look-alike
        'name = "x"\ntools = [{section = "fs"}]\n',  # a tool without an id
        'name = "x"\ntools = {id = "read"}\n',  # tools not a list
    ],
)
def test_a_broken_builtin_catalog_is_read_with_positions(text: str) -> None:
    assert cat._builtin_file(text) is None


def test_the_defaults_a_builtin_catalog_omits_are_the_models() -> None:
    """A catalog that writes nothing optional derives, unvalidated, what the model says."""
    bare = {"name": "x", "tools": [{"id": "read", "section": "fs"}], "grants": []}
    bare["grants"] = [{"tool": "read", "when_allowed": "read"}]
    bare["profiles"] = {"p": {}}
    bare["sandbox"], bare["subagents"] = {}, {}
    quick = cat._derive([bare])
    checked = cat._derive([CatalogFile.model_validate(bare).model_dump()])
    assert replace(quick, files=()) == replace(checked, files=())


def test_each_subcommand_parser_is_the_one_the_full_parser_holds() -> None:
    """`policyctl <command>` builds only that command's parser: the names must be the ones
    the modules register, and the parser the same."""
    import argparse

    from policyctl.cli.main import SUBCOMMANDS, build_parser

    def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        [action] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        return dict(action.choices)

    full = subparsers(build_parser())
    assert list(full) == list(SUBCOMMANDS)
    for name in SUBCOMMANDS:
        [(only, parser)] = subparsers(build_parser(name)).items()
        assert only == name
        assert parser.format_help() == full[name].format_help()
