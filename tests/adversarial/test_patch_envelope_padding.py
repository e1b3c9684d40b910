"""Envelope headers are read as Codex's apply_patch reads them: it trims a hunk header's line
(Unicode blanks included) before matching `*** Add File: ` and friends, so `  *** Add File: .env`
writes `.env`. A line that looks like an envelope marker but is none cannot be analysed."""

from __future__ import annotations

from typing import Any

import pytest

from policyctl import RunContext, load_policy, resolve
from policyctl.callrules.patch import patch_paths

# a patch's files are write calls and its updates read calls (catalog relations): both in the run
POLICY = 'tools:\n  deny: ["apply_patch(.env)"]\n  allow: [apply_patch, write, read]\n'
BEGIN, END = "*** Begin Patch\n", "*** End Patch\n"


@pytest.fixture(scope="module")
def resolved(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("envelope") / "ap.yaml"
    path.write_text(POLICY)
    return resolve(load_policy(str(path)), RunContext(provider="openai", workspace="/tmp"))


def _label(resolved: Any, patch: str) -> str:
    return str(resolved.decide_call("apply_patch", {"input": patch}).verdict.effect.label)


@pytest.mark.parametrize(
    "header",
    [
        "  *** Add File: .env",
        "\t*** Add File: .env",
        "*** Add File: .env  ",
        "\u3000*** Add File: .env",  # Rust's trim() strips Unicode blanks too
        "\u00a0*** Delete File: .env",
        " *** Update File: .env",
        "  *** Move to: .env",
    ],
)
def test_a_padded_header_is_decided(resolved: Any, header: str) -> None:
    patch = f"{BEGIN}*** Add File: notes.txt\n+hi\n{header}\n+SECRET=x\n{END}"
    paths = patch_paths(patch)
    assert not isinstance(paths, str) and ".env" in paths
    assert _label(resolved, patch) == "deny"


@pytest.mark.parametrize(
    "line",
    [
        "*** add file: .env",  # another case: not Codex's marker, but a parser may accept it
        "***  Add File: .env",
        "*** AddFile: .env",
        "*** Rename File: .env",
        "*** .env\t2024-01-01",  # a context diff's header, which `patch` applies
        " *** End of file",
    ],
)
def test_a_near_marker_cannot_be_analysed(resolved: Any, line: str) -> None:
    patch = f"{BEGIN}*** Add File: notes.txt\n+hi\n{line}\n+SECRET=x\n{END}"
    assert isinstance(patch_paths(patch), str)
    assert _label(resolved, patch) != "allow"


def test_known_markers_and_rules_are_not_paths(resolved: Any) -> None:
    patch = f"  {BEGIN}*** Update File: doc.md\n@@\n ***\n-old\n+new\n*** End of File\n {END}"
    assert patch_paths(patch) == ("doc.md",)
    assert _label(resolved, patch) == "allow"


@pytest.mark.parametrize("blank", ["\r", "\x0b", "\x0c", "\x1c", "\x85", "\u2028"])
def test_a_line_ends_only_at_a_newline(resolved: Any, blank: str) -> None:
    # Codex (Rust's `lines()`) and git end a line at "\n" only: this header writes src/.env
    patch = f"{BEGIN}*** Add File: src/a{blank}/../.env\n+x\n{END}"
    assert patch_paths(patch) == (f"src/a{blank}/../.env",)
    assert _label(resolved, patch) == "deny"


def test_crlf_lines_are_read() -> None:
    assert patch_paths("*** Begin Patch\r\n*** Add File: .env\r\n+x\r\n*** End Patch\r\n") == (
        ".env",
    )


def test_the_name_is_the_rest_of_the_header_as_written(tmp_path: Any) -> None:
    # Codex writes ` src/x` (a directory named " src"), which `./src/**` does not admit
    path = tmp_path / "src.yaml"
    path.write_text('tools:\n  allow: ["apply_patch(./src/**)"]\n')
    res = resolve(load_policy(str(path)), RunContext(provider="openai", workspace="/tmp"))
    padded = f"{BEGIN}*** Add File:  src/x\n+x\n{END}"
    assert patch_paths(padded) == (" src/x",)
    assert _label(res, padded) != "allow"
    assert _label(res, f"{BEGIN}*** Add File: src/x\n+x\n{END}") == "allow"
    assert isinstance(patch_paths(f"{BEGIN}*** Add File:src/x\n+x\n{END}"), str)
