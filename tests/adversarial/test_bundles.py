"""Forged and broken bundles (issue 11, item 9): both hashes are checked, the shape is checked
with located errors, and a configured key makes a valid signature mandatory."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policyctl import PolicyError, RunContext, Sender, resolve
from policyctl.api import compile_loaded
from policyctl.cli.main import main
from policyctl.document.extends import load_document

CTX = RunContext(agent="coder", provider="openai", sender=Sender(id="1"))


def _bundle() -> dict[str, Any]:
    from policyctl.compile.bundle import build_bundle

    loaded = load_document(EXAMPLES / "team.yaml")
    return build_bundle(loaded, compile_loaded(loaded))


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _rehash(bundle: dict[str, Any], semantic: bool = True) -> dict[str, Any]:
    """What a forger does: recompute the unkeyed hashes after an edit."""
    body = {k: v for k, v in bundle.items() if k not in ("contentHash", "signature")}
    if semantic and isinstance(body.get("document"), dict):
        meaning = {
            "format": body.get("format"),
            "catalog": body.get("catalog"),
            "document": body["document"],
        }
        body["hash"] = "sha256:" + hashlib.sha256(_canonical(meaning).encode()).hexdigest()
    out = {**body, "contentHash": "sha256:" + hashlib.sha256(_canonical(body).encode()).hexdigest()}
    if "signature" in bundle:
        out["signature"] = bundle["signature"]
    return out


def _strip_denies(bundle: dict[str, Any]) -> dict[str, Any]:
    forged = copy.deepcopy(bundle)
    forged["document"]["agents"]["entries"]["coder"]["tools"].pop("deny")
    return forged


def _write(tmp_path: Path, bundle: dict[str, Any], name: str = "p.bundle.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(bundle), encoding="utf-8")
    return path


def _load(path: Path, key: bytes | None = None) -> Any:
    from policyctl.compile.bundle import load_bundle

    return load_bundle(path, key=key) if key is not None else load_bundle(path)


def _codes(path: Path, key: bytes | None = None) -> list[str]:
    with pytest.raises(PolicyError) as exc:
        _load(path, key)
    return [d.code for d in exc.value.diagnostics]


def test_a_forged_document_with_only_the_content_hash_recomputed_is_refused(
    tmp_path: Path,
) -> None:
    honest = _bundle()
    assert "secrets" not in resolve(_load(_write(tmp_path, honest)), CTX).allowed
    forged = _rehash(_strip_denies(honest), semantic=False)
    assert _codes(_write(tmp_path, forged)) == ["PC416"]


def test_signed_bundles_cannot_be_forged_without_the_key(tmp_path: Path) -> None:
    from policyctl.compile.bundle import sign_bundle

    key = b"k" * 32
    signed = sign_bundle(_bundle(), key)
    assert "secrets" not in resolve(_load(_write(tmp_path, signed), key), CTX).allowed
    # every hash recomputed, signature kept: the signature no longer matches
    forged = _rehash(_strip_denies(signed))
    assert _codes(_write(tmp_path, forged), key) == ["PC116"]
    # the signature dropped: a configured key makes it mandatory
    unsigned = {k: v for k, v in forged.items() if k != "signature"}
    assert _codes(_write(tmp_path, unsigned), key) == ["PC116"]
    # another key
    assert _codes(_write(tmp_path, signed), b"x" * 32) == ["PC116"]


def test_the_cli_signs_and_verifies_with_the_configured_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    keyfile = tmp_path / "bundle.key"
    keyfile.write_text("a-long-enough-secret-key\n", encoding="utf-8")
    out = tmp_path / "team.bundle.json"
    assert (
        main(["compile", str(EXAMPLES / "team.yaml"), "--key", str(keyfile), "-o", str(out)]) == 0
    )
    unsigned = tmp_path / "unsigned.bundle.json"
    assert main(["compile", str(EXAMPLES / "team.yaml"), "-o", str(unsigned)]) == 0
    monkeypatch.setenv("POLICYCTL_BUNDLE_KEY_FILE", str(keyfile))
    capsys.readouterr()
    assert main(["resolve", str(out), "--agent", "coder", "--provider", "openai"]) == 0
    assert main(["resolve", str(unsigned), "--agent", "coder", "--provider", "openai"]) == 2
    assert "PC116" in capsys.readouterr().err


@pytest.mark.parametrize(
    "edit",
    [
        lambda b: b.pop("locations"),
        lambda b: b.pop("catalog"),
        lambda b: b.pop("document"),
        lambda b: b.update(locations={"values": [[["tools"], "x", "one", 1]], "keys": []}),
        lambda b: b.update(files="team.yaml"),
        lambda b: b.update(catalog=[{"name": 3}]),
        lambda b: b.update(document={"tools": {"deny": 7}}),
        lambda b: b.update(extra=True),
    ],
    ids=[
        "no-locations",
        "no-catalog",
        "no-document",
        "bad-row",
        "files",
        "catalog",
        "doc",
        "extra",
    ],
)
def test_a_bundle_of_the_wrong_shape_is_a_located_diagnostic(tmp_path: Path, edit: Any) -> None:
    bundle = _bundle()
    edit(bundle)
    codes = _codes(_write(tmp_path, _rehash(bundle)))
    assert codes and set(codes) <= {"PC416", "PC201", "PC202", "PC203", "PC305"}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_rehashed_mutation_loads_or_is_a_policy_error(tmp_path: Path, data: Any) -> None:
    bundle = _bundle()
    # walk to a random place and put a random value there
    node: Any = bundle
    for _ in range(data.draw(st.integers(0, 4))):
        if isinstance(node, dict) and node:
            key = data.draw(st.sampled_from(sorted(node)))
            if not isinstance(node[key], dict | list):
                break
            node = node[key]
        elif isinstance(node, list) and node:
            item = node[data.draw(st.integers(0, len(node) - 1))]
            if not isinstance(item, dict | list):
                break
            node = item
    value = data.draw(json_values)
    if isinstance(node, dict):
        node[data.draw(st.sampled_from(sorted(node) or ["x"]))] = value
    elif isinstance(node, list):
        node.append(value)
    path = _write(tmp_path, _rehash(bundle))
    try:
        _load(path)
    except PolicyError as exc:
        assert exc.diagnostics


def test_changing_a_built_bundle_does_not_change_the_cached_catalog() -> None:
    # found by the mutation test above: the bundle shared the catalog's own definition dicts
    first = _bundle()
    first["catalog"][0]["name"] = "changed"
    first["catalog"][0].clear()
    assert _bundle()["hash"] == first["hash"]
