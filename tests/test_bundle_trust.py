"""What vouches for a bundle is said wherever it is loaded: validate, resolve and the store's
log; a key variable or key file that reads as "no key" is an error; a key file others can read
is a warning (issue 20, part 7, item 4).

Each row: how the bundle is made and where the key comes from, then the codes validate,
resolve and the store must give (an error code: the load is refused everywhere)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from conftest import EXAMPLES

from policyctl import RunContext
from policyctl.analysis.validate import validate_path
from policyctl.cli.main import main
from policyctl.runtime.store import PolicyStore, PolicyUnavailable

KEY = "k" * 32

# (id, sign the bundle, the key variable: "file" / "group-readable" / "" / "  " / "empty-file"
#  / None for unset, the codes expected, whether the load is refused)
CASES = [
    ("unsigned, no key", False, None, {"PC162"}, False),
    ("signed, no key: its signature is not checked", True, None, {"PC163"}, False),
    ("signed, key configured", True, "file", set(), False),
    ("signed, key readable by group and others", True, "group-readable", {"PC161"}, False),
    ("key variable set to nothing", True, "", {"PC160"}, True),
    ("key variable set to blanks", True, "  ", {"PC160"}, True),
    ("key variable names an empty file", True, "empty-file", {"PC116"}, True),
    ("unsigned, key configured: refused", False, "file", {"PC116"}, True),
]
TRUST = {"PC116", "PC160", "PC161", "PC162", "PC163"}


def _setup(tmp_path: Path, sign: bool, key: str | None, monkeypatch: pytest.MonkeyPatch) -> Path:
    keyfile = tmp_path / "bundle.key"
    keyfile.write_text(KEY)
    os.chmod(keyfile, 0o600)
    bundle = tmp_path / "team.bundle.json"
    argv = ["compile", str(EXAMPLES / "team.yaml"), "-o", str(bundle)]
    monkeypatch.delenv("POLICYCTL_BUNDLE_KEY_FILE", raising=False)
    assert main([*argv, "--key", str(keyfile)] if sign else argv) == 0
    if key == "file":
        monkeypatch.setenv("POLICYCTL_BUNDLE_KEY_FILE", str(keyfile))
    elif key == "group-readable":
        os.chmod(keyfile, 0o644)
        monkeypatch.setenv("POLICYCTL_BUNDLE_KEY_FILE", str(keyfile))
    elif key == "empty-file":
        empty = tmp_path / "empty.key"
        empty.write_text("")
        os.chmod(empty, 0o600)
        monkeypatch.setenv("POLICYCTL_BUNDLE_KEY_FILE", str(empty))
    elif key is not None:
        monkeypatch.setenv("POLICYCTL_BUNDLE_KEY_FILE", key)
    return bundle


@pytest.mark.parametrize(
    ("sign", "key", "codes", "refused"),
    [pytest.param(*row[1:], id=row[0]) for row in CASES],
)
def test_a_bundle_load_says_what_vouches_for_it(
    sign: bool,
    key: str | None,
    codes: set[str],
    refused: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    bundle = _setup(tmp_path, sign, key, monkeypatch)
    # validate
    found = validate_path(str(bundle), strict=False, max_contexts=50)
    assert {d.code for d in found} & TRUST == codes
    for d in found:
        if d.code in codes:
            assert d.fix, d.message  # says how to sign, configure or fix the key
            if d.code in ("PC162", "PC163"):
                assert bundle.name in d.message
    # resolve: the warning on stderr before the answer, or the refusal (exit 2)
    capsys.readouterr()
    code = main(["resolve", str(bundle), "--agent", "coder"])
    err = capsys.readouterr().err
    assert code == (2 if refused else 0)
    for expected in codes:
        assert expected in err
    # the store: a warning on its logger, or nothing in service
    with caplog.at_level(logging.WARNING, logger="policyctl.store"):
        store = PolicyStore(bundle, settle=0)
    logged = " ".join(r.getMessage() for r in caplog.records if r.name == "policyctl.store")
    for expected in codes:
        assert expected in logged
    if refused:
        assert store.current is None and {d.code for d in store.errors} == codes
    else:
        assert store.current is not None


def test_an_unset_variable_is_no_key_and_compiling_unsigned_says_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("POLICYCTL_BUNDLE_KEY_FILE", raising=False)
    assert (
        main(["compile", str(EXAMPLES / "team.yaml"), "-o", str(tmp_path / "t.bundle.json")]) == 0
    )
    assert "PC16" not in capsys.readouterr().err
    # an empty variable is an error for compile too: it would sign nothing without a word
    monkeypatch.setenv("POLICYCTL_BUNDLE_KEY_FILE", "")
    assert (
        main(["compile", str(EXAMPLES / "team.yaml"), "-o", str(tmp_path / "u.bundle.json")]) == 2
    )
    assert "PC160" in capsys.readouterr().err


def test_a_group_readable_key_is_said_when_signing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("POLICYCTL_BUNDLE_KEY_FILE", raising=False)
    keyfile = tmp_path / "k"
    keyfile.write_text(KEY)
    os.chmod(keyfile, 0o640)
    out = tmp_path / "s.bundle.json"
    assert (
        main(["compile", str(EXAMPLES / "team.yaml"), "-o", str(out), "--key", str(keyfile)]) == 0
    )
    err = capsys.readouterr().err
    assert "PC161" in err and "chmod 600" in err


def test_the_store_refuses_a_bundle_it_cannot_verify_without_raising(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = _setup(tmp_path, False, "file", monkeypatch)
    store = PolicyStore(bundle, settle=0)
    with pytest.raises(PolicyUnavailable):  # nothing was ever in service: fail closed
        store.resolve(RunContext())
