"""Hostile files (issue 11, items 10-12): special files, `extends` reaching out of the policy's
tree to read secrets, and inputs that used to end in a traceback instead of a diagnostic."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from policyctl import PolicyError, load_policy, load_policy_text
from policyctl.cli.main import main
from policyctl.document.extends import load_document
from policyctl.settings import Limits, default_limits

SECRET = "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"


def _codes(fn: object) -> list[str]:
    with pytest.raises(PolicyError) as exc:
        fn()  # type: ignore[operator]
    return [d.code for d in exc.value.diagnostics]


# -- item 10: special files ---------------------------------------------------------------------


def test_extends_dev_zero_is_refused_without_reading_it(tmp_path: Path) -> None:
    # /dev/zero says it is 0 bytes and never ends: the old size check trusted stat().
    os.symlink("/dev/zero", tmp_path / "zero.yaml")
    root = tmp_path / "p.yaml"
    root.write_text("extends: zero.yaml\n", encoding="utf-8")
    assert _codes(lambda: load_policy(root)) == ["PC113"]  # outside the tree, first of all
    # and even where /dev is allowed, a device is not a file to read
    assert _codes(lambda: load_policy(root, limits=Limits(extends_roots=("/dev",)))) == ["PC112"]


def test_a_fifo_is_refused_and_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    root = tmp_path / "p.yaml"
    root.write_text("extends: pipe.yaml\n", encoding="utf-8")
    outcome: list[list[str]] = []
    worker = threading.Thread(target=lambda: outcome.append(_codes(lambda: load_policy(root))))
    worker.daemon = True  # if the read blocked, the thread would stay behind: let it
    worker.start()
    worker.join(timeout=20)
    assert outcome == [["PC112"]], "reading a FIFO blocked"
    assert _codes(lambda: load_policy(fifo)) == ["PC112"]  # named directly, too


def test_a_directory_is_not_a_policy(tmp_path: Path) -> None:
    (tmp_path / "d.yaml").mkdir()
    assert _codes(lambda: load_policy(tmp_path / "d.yaml")) == ["PC112"]


def test_a_file_growing_past_the_cap_is_cut_off(tmp_path: Path) -> None:
    from policyctl.formats.files import TooLarge, read_capped

    path = tmp_path / "p.yaml"
    path.write_bytes(b"x" * 101)
    with pytest.raises(TooLarge):
        read_capped(path, 100)
    assert read_capped(path, 101) == b"x" * 101


# -- item 11: extends confinement, no quoting of non-policy files --------------------------------


@pytest.mark.parametrize(
    "target",
    ["../outside.yaml", "{outside}", "sub/../../outside.yaml"],
    ids=["dotdot", "absolute", "through-a-subdir"],
)
def test_extends_stays_in_the_policy_tree(tmp_path: Path, target: str) -> None:
    tree = tmp_path / "policies"
    (tree / "sub").mkdir(parents=True)
    outside = tmp_path / "outside.yaml"
    outside.write_text("tools: {deny: [exec]}\n", encoding="utf-8")
    root = tree / "p.yaml"
    root.write_text(f"extends: {target.format(outside=outside)}\n", encoding="utf-8")
    assert _codes(lambda: load_policy(root)) == ["PC113"]
    # ... unless an operator allows that directory
    limits = Limits(extends_roots=(str(tmp_path),))
    assert load_policy(root, limits=limits).global_tools.policy is not None


def test_a_symlink_out_of_the_tree_is_refused(tmp_path: Path) -> None:
    (tmp_path / "policies").mkdir()
    (tmp_path / "secret.yaml").write_text("tools: {deny: [exec]}\n", encoding="utf-8")
    os.symlink(tmp_path / "secret.yaml", tmp_path / "policies" / "base.yaml")
    root = tmp_path / "policies" / "p.yaml"
    root.write_text("extends: base.yaml\n", encoding="utf-8")
    assert _codes(lambda: load_policy(root)) == ["PC113"]


@pytest.mark.parametrize("name", [".env", ".git-credentials", "credentials", "id_rsa.pub"])
def test_only_policy_files_can_be_extended(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text(SECRET + "\n", encoding="utf-8")
    root = tmp_path / "p.yaml"
    root.write_text(f"extends: {name}\n", encoding="utf-8")
    assert _codes(lambda: load_policy(root)) == ["PC113"]


def test_validate_never_echoes_a_file_that_did_not_parse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A secret in a file with a policy's extension, inside the tree: the syntax error is
    # reported with its location, but the line itself stays out of the CI log.
    (tmp_path / "secrets.yaml").write_text("aws_access_key_id: AKIAIOSFODNN7EXAMPLE: x\n")
    root = tmp_path / "p.yaml"
    root.write_text("extends: secrets.yaml\n", encoding="utf-8")
    for fmt in ("text", "json", "sarif", "github"):
        code = main(["validate", "--format", fmt, str(root)])
        out = capsys.readouterr()
        assert code == 1
        assert "PC103" in out.out and "secrets.yaml" in out.out
        assert "AKIA" not in out.out + out.err, fmt


def test_the_root_files_own_syntax_error_is_still_quoted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "p.yaml"
    root.write_text("tools: deny: [exec]\n", encoding="utf-8")
    main(["validate", str(root)])
    assert "tools: deny: [exec]" in capsys.readouterr().out


# -- item 12: diagnostics, never tracebacks ------------------------------------------------------

BIG = "9" * 5000


@pytest.mark.parametrize(
    "name,text,code",
    [
        ("big.json", '{"session": {"mainKey": ' + BIG + "}}", "PC114"),
        ("big.yaml", f"session: {{mainKey: {BIG}}}\n", "PC114"),
        ("big.toml", f"[session]\nmainKey = {BIG}\n", "PC114"),
        ("big-tagged.yaml", f"session: {{mainKey: !!int {BIG}}}\n", "PC114"),
        ("surrogate.json", '{"tools": {"deny": ["\\ud800exec"]}}', "PC115"),
        ("surrogate-key.json", '{"channels": {"\\udfffx": {}}}', "PC115"),
        ("surrogate.yaml", 'tools: {deny: ["\\ud800exec"]}\n', "PC115"),
        ("surrogate-key.yaml", 'channels: {"\\ud800": {}}\n', "PC115"),
    ],
)
def test_hostile_scalars_are_diagnostics(name: str, text: str, code: str) -> None:
    assert _codes(lambda: load_policy_text(text, name)) == [code]


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_no_output_format_crashes_on_a_surrogate(
    tmp_path: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "p.json"
    path.write_text('{"tools": {"deny": ["\\ud800exec"]}}', encoding="utf-8")
    assert main(["validate", "--format", fmt, str(path)]) == 1
    assert "PC115" in capsys.readouterr().out


def test_depth_setting_cannot_outgrow_the_stack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # POLICYCTL_MAX_DEPTH=100000 used to let a 3,000-deep file reach a RecursionError.
    monkeypatch.setenv("POLICYCTL_MAX_DEPTH", "100000")
    default_limits.cache_clear()
    try:
        assert _codes(default_limits) == ["PC203"]
    finally:
        default_limits.cache_clear()
    deep = Limits(max_depth=256)
    for name, text in (
        ("deep.json", '{"x": ' + "[" * 3000 + "]" * 3000 + "}"),
        ("deep.yaml", "x: " + "[" * 3000 + "]" * 3000 + "\n"),
        ("deep.toml", "x = " + "[" * 3000 + "]" * 3000 + "\n"),
    ):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        codes = _codes(lambda p=path: load_document(p, deep))
        assert codes == ["PC107"], name


def test_a_tree_file_that_parses_but_is_no_policy_is_not_quoted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "config.yaml").write_text("aws_secret: AKIAIOSFODNN7EXAMPLE\n", encoding="utf-8")
    root = tmp_path / "p.yaml"
    root.write_text("extends: config.yaml\n", encoding="utf-8")
    assert main(["validate", str(root)]) == 1
    out = capsys.readouterr().out
    assert "PC201" in out and "config.yaml:1:1" in out
    assert "AKIA" not in out


def test_extends_roots_come_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "base.yaml").write_text("tools: {deny: [exec]}\n", encoding="utf-8")
    tree = tmp_path / "policies"
    tree.mkdir()
    root = tree / "p.yaml"
    root.write_text("extends: ../shared/base.yaml\n", encoding="utf-8")
    assert _codes(lambda: load_policy(root)) == ["PC113"]
    monkeypatch.setenv("POLICYCTL_EXTENDS_ROOTS", f"/nonexistent{os.pathsep}{shared}")
    default_limits.cache_clear()
    try:
        assert load_policy(root).global_tools.policy is not None
    finally:
        monkeypatch.delenv("POLICYCTL_EXTENDS_ROOTS")
        default_limits.cache_clear()


def test_a_tool_inventory_that_is_a_device_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from conftest import EXAMPLES

    code = main(["resolve", str(EXAMPLES / "team.yaml"), "--tool-inventory", "/dev/zero"])
    assert code == 2 and "not a regular file" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["device", "fifo", "oversized", "not-utf8"])
def test_simulate_reads_its_calls_file_like_a_policy_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """`simulate --calls` read the whole file with no cap: `/dev/zero` ate memory until killed,
    a FIFO hung, and bytes that are not UTF-8 ended in a traceback."""
    from conftest import EXAMPLES

    calls = tmp_path / "calls.jsonl"
    if kind == "device":
        os.symlink("/dev/zero", calls)
    elif kind == "fifo":
        os.mkfifo(calls)
    elif kind == "oversized":
        with calls.open("wb") as fh:  # sparse: larger than the cap, nothing to read
            fh.truncate(default_limits().max_file_bytes + 1)
    else:
        calls.write_bytes(b'{"tool": "\xff"}\n')
    code = main(["simulate", str(EXAMPLES / "team.yaml"), "--calls", str(calls)])
    err = capsys.readouterr().err
    assert code == 2, err
    expected = {
        "device": "not a regular file",
        "fifo": "not a regular file",
        "oversized": "larger than the limit",
        "not-utf8": "not valid UTF-8",
    }
    assert expected[kind] in err


def _operator_catalog(where: Path, extends: str = "openclaw") -> Path:
    where.mkdir(parents=True, exist_ok=True)
    path = where / "cat.toml"
    path.write_text(f'name = "ops"\nextends = "{extends}"\n', encoding="utf-8")
    return path


def test_an_operator_catalog_is_confined_like_extends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`catalog: ../elsewhere/cat.toml` read any file the process could read, as `extends`
    once did: it is confined to the policy's tree, with the same setting to allow more."""
    tree = tmp_path / "policies"
    _operator_catalog(tree / "catalogs")
    inside = tree / "in.yaml"
    inside.write_text("catalog: catalogs/cat.toml\n", encoding="utf-8")
    assert load_policy(inside).catalog is not None
    shared = tmp_path / "shared"
    _operator_catalog(shared)
    outside = tree / "out.yaml"
    outside.write_text("catalog: ../shared/cat.toml\n", encoding="utf-8")
    assert _codes(lambda: load_policy(outside)) == ["PC113"]
    assert main(["validate", str(outside)]) == 1
    # a catalog in the tree may not extend one outside it either
    (tree / "hop.toml").write_text(
        'name = "hop"\nextends = "../shared/cat.toml"\n', encoding="utf-8"
    )
    hop = tree / "hop.yaml"
    hop.write_text("catalog: hop.toml\n", encoding="utf-8")
    assert _codes(lambda: load_policy(hop)) == ["PC113"]
    assert load_policy(outside, limits=Limits(extends_roots=(str(shared),))).catalog is not None
    monkeypatch.setenv("POLICYCTL_EXTENDS_ROOTS", str(shared))
    default_limits.cache_clear()
    try:
        assert load_policy(hop).catalog is not None
        assert main(["validate", str(outside)]) == 0
    finally:
        monkeypatch.delenv("POLICYCTL_EXTENDS_ROOTS")
        default_limits.cache_clear()
