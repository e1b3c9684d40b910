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
from typing import Any

import pytest
from conftest import EXAMPLES
from hypothesis import given
from hypothesis import strategies as st

from policyctl.cli.main import main
from policyctl.compile import bundleread
from policyctl.compile.bundle import load_bundle
from policyctl.compile.bundleread import LOCATE_CHARS, _parse, _Refused, bundle_limits
from policyctl.diagnostics import PolicyError
from policyctl.formats.jsonpos import parse_json
from policyctl.located import flatten
from policyctl.settings import Limits

KINDS = {
    # kind: (what the file is, the code and the words the diagnostic has)
    "device": ("PC112", "not a regular file"),
    "fifo": ("PC112", "not a regular file"),
    "directory": ("PC112", "not a regular file"),
    "oversized": ("PC106", "larger than the limit"),
    "deep": ("PC416", "not a bundle"),
    "not-utf8": ("PC102", "not valid UTF-8"),
    "a list": ("PC416", "not a policyctl-bundle/1 file"),
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


# -- the fast reader refuses exactly what the located reader refuses ---------------------------

SMALL = Limits(max_depth=4, max_nodes=12)
json_texts = st.recursive(
    st.sampled_from(["1", "-0.5", "1e400", "null", "true", '"x"', '"\\u00e9"', "NaN", "Infinity"])
    | st.sampled_from(['"\\ud83d\\ude00"', '"\\ud800"', '"a\\udc00b"', '"\\"', '"\t"', "01"]),
    lambda inner: (
        st.lists(inner, max_size=4).map(lambda xs: "[" + ",".join(xs) + "]")
        | st.lists(
            st.tuples(st.sampled_from(['"a"', '"b"', '"\\ud800"', '"a"', "1"]), inner),
            max_size=3,
        ).map(lambda kv: "{" + ",".join(f"{k}:{v}" for k, v in kv) + "}")
    ),
    max_leaves=14,
)


#: right at the depth and node caps of SMALL, where an off-by-one would show
at_the_caps = st.integers(1, 7).map(lambda n: "[" * n + "]" * n) | st.integers(9, 15).map(
    lambda n: "[" + ",".join(["1"] * (n - 1)) + "]"
)


@given(json_texts | at_the_caps, st.sampled_from(["", " ", "\n", " x", ","]))
def test_the_fast_reader_refuses_exactly_what_the_located_reader_refuses(
    text: str, tail: str
) -> None:
    text += tail
    try:
        located: Any = flatten(parse_json(text, "b.json", SMALL))[0]
    except PolicyError:
        located = REFUSED
    try:
        fast: Any = _parse(text, "b.json", SMALL)
    except _Refused:
        fast = REFUSED
    assert fast == located or (fast != fast and located != located), text  # NaN-free anyway


REFUSED = object()


def test_a_large_bundle_is_never_read_by_the_located_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The located reader costs about 3 us a value: at the node cap it took most of a minute to
    refuse a bundle of nothing but `[1,1,...]` (16 million values in 32 MB)."""

    def located_reader(*_: Any) -> Any:
        raise AssertionError("the located reader read a large bundle")

    monkeypatch.setattr(bundleread, "parse_json", located_reader)
    big = tmp_path / "big.bundle.json"
    big.write_text("[" + "1," * (LOCATE_CHARS // 2) + "1]")
    with pytest.raises(PolicyError, match="not a policyctl-bundle/1 file"):
        load_bundle(big)
    big.write_text('{"format": "policyctl-bundle/1", "pad": "' + "x" * LOCATE_CHARS + '"}')
    with pytest.raises(PolicyError) as caught:
        load_bundle(big)
    assert all(d.code == "PC416" and d.source for d in caught.value.diagnostics)
    big.write_text('{"a": 1, "a": 2, "pad": "' + "x" * LOCATE_CHARS + '"}')
    with pytest.raises(PolicyError, match='duplicate key "a"'):
        load_bundle(big)
    big.write_text('{"a": [1, 2,], "pad": "' + "x" * LOCATE_CHARS + '"}')
    with pytest.raises(PolicyError) as caught:
        load_bundle(big)
    (syntax,) = caught.value.diagnostics
    assert syntax.source is not None and (syntax.source.line, syntax.source.column) == (1, 13)
