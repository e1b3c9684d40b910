"""Bundles: a compiled policy as one deterministic JSON file, with a content hash inside.

A bundle carries the merged, validated document, the catalog definition and the location of
every value, so a runtime can load it without reading the policy files, resolving `extends`,
parsing YAML or reading catalog files. Two hashes are checked on load: `contentHash` covers
everything but itself, so a bundle edited by hand, or stale against its sources, is detected,
and `hash` covers what the policy says. Hashes are unkeyed: anyone can recompute them after
removing a deny. A *signed* bundle (HMAC-SHA256 under a key file, `policyctl compile --key`)
cannot be forged without the key, and when a key is configured (POLICYCTL_BUNDLE_KEY_FILE, or
`load_bundle(key=...)`) an unsigned or wrongly signed bundle is refused.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from ..catalog.load import catalog_from_definition
from ..diagnostics import CODES, Diagnostic, PolicyError, Source
from ..document.extends import LoadedDocument
from ..document.model import PolicyDocument
from ..document.validate import validate_document
from ..formats.schema_errors import diagnostics_from_validation
from ..formats.strict import StrictModel
from ..located import LocationIndex
from ..settings import bundle_key_file
from .bundlekeys import configured_key, trust_warnings
from .bundleread import FORMAT, bundle_error, read_bundle
from .compiled import CompiledPolicy
from .scopes import compile_document


def _relative(file: str, base: Path) -> str:
    if file.startswith("<"):
        return file
    try:
        return Path(os.path.relpath(Path(file).resolve(), base.resolve())).as_posix()
    except ValueError:
        return Path(file).as_posix()


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def build_bundle(loaded: LoadedDocument, policy: CompiledPolicy) -> dict[str, Any]:
    base = Path(loaded.root).parent
    doc = PolicyDocument.model_validate(loaded.data)

    relative: dict[str, str] = {}  # a handful of files, hundreds of thousands of rows

    def rows(table: dict[tuple[str | int, ...], Source]) -> list[list[Any]]:
        out = []
        for path, src in table.items():
            file = relative.get(src.file)
            if file is None:
                file = relative[src.file] = _relative(src.file, base)
            out.append([list(path), file, src.line, src.column])
        return sorted(out, key=_canonical)

    body: dict[str, Any] = {
        "format": FORMAT,
        "root": _relative(loaded.root, base),
        "files": sorted(_relative(f, base) for f in loaded.files),
        # a copy: the definition belongs to the (cached) catalog, and a bundle is plain data
        # its caller may change
        "catalog": copy.deepcopy(list(policy.catalog.definition)),
        "document": doc.model_dump(mode="json", by_alias=True, exclude_none=True),
        "locations": {"values": rows(loaded.locations.values), "keys": rows(loaded.locations.keys)},
    }
    # `hash`: what the policy says (catalog and document) - the same for the same policy
    # whatever the key order, comments or layout of its files. `contentHash`: everything,
    # locations included - what `--check` and loading compare.
    semantic = {"format": FORMAT, "catalog": body["catalog"], "document": body["document"]}
    body["hash"] = "sha256:" + hashlib.sha256(_canonical(semantic).encode()).hexdigest()
    body["contentHash"] = "sha256:" + hashlib.sha256(_canonical(body).encode()).hexdigest()
    return body


def render_bundle(bundle: dict[str, Any]) -> str:
    return json.dumps(bundle, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def sign_bundle(bundle: dict[str, Any], key: bytes) -> dict[str, Any]:
    """The bundle with an HMAC-SHA256 `signature` over everything else (hashes included)."""
    body = {k: v for k, v in bundle.items() if k != "signature"}
    return {**body, "signature": _signature(body, key)}


def _signature(body: dict[str, Any], key: bytes) -> str:
    mac = hmac.new(key, _canonical(body).encode(), hashlib.sha256)
    return "hmac-sha256:" + mac.hexdigest()


Row = tuple[list[str | int], str, int, int]


class _Locations(StrictModel):
    values: list[Row]
    keys: list[Row]


class BundleFile(StrictModel):
    """The shape of a bundle file: checked before anything in it is used."""

    format: str
    root: str
    files: list[str]
    catalog: list[dict[str, Any]] = Field(min_length=1)
    document: dict[str, Any]
    locations: _Locations
    hash: str
    content_hash: str = Field(alias="contentHash")
    signature: str | None = None


def load_bundle(
    path: str | Path, key: bytes | None = None, text: str | None = None
) -> CompiledPolicy:
    """Load a bundle written by `policyctl compile`, verifying before use: its shape (located
    errors), its format, both hashes and, when a key is given or configured
    (POLICYCTL_BUNDLE_KEY_FILE), its signature, which is then required. What vouches for the
    bundle is said in the policy's diagnostics (`bundlekeys.trust_warnings`). `text` is the
    file's content when the caller has read it (the store digests what it reads)."""
    shown = str(path)
    given = key is not None
    key = key if given else configured_key()
    text, data, locate = read_bundle(path, text)
    try:
        bundle = BundleFile.model_validate_json(text)
    except ValidationError as exc:
        found = diagnostics_from_validation(
            exc, locate(), code_for_extra="PC416", model=BundleFile, data=data
        )
        first_line = Source(shown, 1, 1)  # a bundle too large to locate values in
        raise PolicyError(
            [
                replace(
                    d,
                    code="PC416",
                    severity=CODES["PC416"].severity,
                    source=d.source or first_line,
                )
                for d in found
            ]
        ) from None
    _verify(shown, data, bundle, key)
    table = LocationIndex()
    for rows, target in (
        (bundle.locations.values, table.values),
        (bundle.locations.keys, table.keys),
    ):
        for parts, file, line, column in rows:
            target[tuple(parts)] = Source(file, line, column)
    try:
        definition: list[Mapping[str, Any]] = list(bundle.catalog)
        catalog = catalog_from_definition(definition)
    except ValidationError as exc:
        problem = exc.errors()[0]["msg"]
        raise bundle_error(shown, f"the bundle's catalog is invalid: {problem}") from None
    except (LookupError, TypeError, ValueError) as exc:  # a definition no compile wrote
        raise bundle_error(shown, f"the bundle's catalog is invalid: {exc!r}") from None
    loaded = LoadedDocument(bundle.document, table, bundle.root, tuple(bundle.files))
    policy = compile_document(validate_document(loaded), table, catalog, loaded.root, loaded.files)
    # a caller that hands the key in vouches for it; a configured key file is checked
    configured = bundle_key_file() if key is not None else None
    trust = [] if given else trust_warnings(shown, bundle.signature is not None, configured)
    return replace(policy, diagnostics=(*trust, *policy.diagnostics)) if trust else policy


def _verify(shown: str, data: dict[str, Any], bundle: BundleFile, key: bytes | None) -> None:
    body = {k: v for k, v in data.items() if k not in ("contentHash", "signature")}
    if bundle.content_hash != _sha256(body):
        raise bundle_error(
            shown,
            "content hash does not match: the bundle was modified; "
            "recompile it with `policyctl compile`",
        )
    semantic = {"format": FORMAT, "catalog": bundle.catalog, "document": bundle.document}
    if bundle.hash != _sha256(semantic):
        raise bundle_error(
            shown,
            "policy hash does not match the catalog and document: the bundle was modified; "
            "recompile it with `policyctl compile`",
        )
    if key is None:
        return
    signed = {k: v for k, v in data.items() if k != "signature"}
    if bundle.signature is None:
        raise PolicyError(
            [
                Diagnostic.make(
                    "PC116",
                    "the bundle is not signed, and a bundle key is configured",
                    Source(shown, 1, 1),
                    fix="compile it with `policyctl compile --key KEYFILE`",
                )
            ]
        )
    if not hmac.compare_digest(bundle.signature, _signature(signed, key)):
        raise PolicyError(
            [
                Diagnostic.make(
                    "PC116",
                    "the bundle's signature does not match its content under the configured key",
                    Source(shown, 1, 1),
                    fix="recompile and sign it with the right key",
                )
            ]
        )


def _sha256(value: Any) -> str:
    return "sha256:" + hashlib.sha256(_canonical(value).encode()).hexdigest()
