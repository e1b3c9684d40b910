"""Bundle files are read as policy files are, in every command that reads one.

A regular file only (a FIFO would hang, `/dev/zero` never ends), a hard byte cap, the node
and depth caps of the parser, and a located diagnostic for each, never a traceback:
`load_bundle` (every command given a `*.bundle.json`) and `compile --check` share
`bundle.read_bundle`. `compile --check` used to read with its own code: a deeply nested file
ended in a RecursionError traceback and the others in an unlocated one-line message.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import EXAMPLES

from policyctl.bundle import bundle_limits, load_bundle
from policyctl.cli.main import main
from policyctl.diagnostics import PolicyError

KINDS = {
    # kind: (what the file is, the code and the words the diagnostic has)
    "device": ("PC112", "not a regular file"),
    "fifo": ("PC112", "not a regular file"),
    "directory": ("PC112", "not a regular file"),
    "oversized": ("PC106", "larger than the limit"),
    "deep": ("PC416", "not a bundle"),
    "not-utf8": ("PC102", "not valid UTF-8"),
    "a list": ("PC416", "not a bundle"),
    "empty": ("PC416", "not a bundle"),
}


def _make(kind: str, where: Path) -> Path:
    path = where / "team.bundle.json"
    if kind == "device":
        os.symlink("/dev/zero", path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "oversized":
        with path.open("wb") as fh:  # sparse: larger than the cap, nothing to read
            fh.truncate(bundle_limits().max_file_bytes + 1)
    elif kind == "deep":
        path.write_text("[" * 100_000)
    elif kind == "not-utf8":
        path.write_bytes(b'{"format": "\xff"}')
    elif kind == "a list":
        path.write_text("[1]")
    else:
        path.write_text("")
    return path


COMMANDS = {
    # command: (its arguments, its exit codes for a file it cannot use)
    "resolve": (lambda b: ["resolve", str(b)], {2}),
    # a finding of the file checked (1), or a file that cannot be read at all (2)
    "validate": (lambda b: ["validate", str(b)], {1, 2}),
    "compile --check": (
        lambda b: ["compile", "--check", str(b), str(EXAMPLES / "team.yaml")],
        {2},
    ),
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("kind", KINDS)
def test_every_command_reads_a_bundle_like_a_policy_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, kind: str
) -> None:
    bundle = _make(kind, tmp_path)
    arguments, exit_code = COMMANDS[command]
    code = main(arguments(bundle))
    out = capsys.readouterr()
    err = out.err + out.out
    expected_code, words = KINDS[kind]
    assert code in exit_code, err
    assert "Traceback" not in err
    assert f"{bundle}:1:" in err and expected_code in err and words in err, err


@pytest.mark.parametrize("kind", KINDS)
def test_load_bundle_raises_a_located_policy_error(tmp_path: Path, kind: str) -> None:
    bundle = _make(kind, tmp_path)
    with pytest.raises(PolicyError) as caught:
        load_bundle(bundle)
    (found,) = caught.value.diagnostics
    expected_code, words = KINDS[kind]
    assert found.code == expected_code and words in found.message
    assert found.source is not None and found.source.file == str(bundle)


def test_compile_check_still_compares_a_good_bundle(tmp_path: Path) -> None:
    bundle = tmp_path / "team.bundle.json"
    policy = str(EXAMPLES / "team.yaml")
    assert main(["compile", policy, "-o", str(bundle)]) == 0
    assert main(["compile", "--check", str(bundle), policy]) == 0
    assert main(["compile", "--check", str(bundle), str(EXAMPLES / "chatbot.yaml")]) == 1
