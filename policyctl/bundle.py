"""Bundles: a compiled policy as one deterministic JSON file, with a content hash inside.

A bundle carries the merged, validated document, the catalog definition and the location of
every value, so a runtime can load it without reading the policy files, resolving `extends`,
parsing YAML or reading catalog files. The hash covers everything but itself, so a bundle that
was edited by hand, or is stale against its sources, is detected.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from .api import validate_document
from .catalog import catalog_from_definition
from .compile import CompiledPolicy, compile_document
from .diagnostics import Diagnostic, PolicyError, Source
from .loader import LoadedDocument
from .located import LocationIndex
from .model import PolicyDocument

FORMAT = "policyctl-bundle/1"


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

    def rows(table: dict[tuple[str | int, ...], Source]) -> list[list[Any]]:
        out = [
            [list(path), _relative(src.file, base), src.line, src.column]
            for path, src in table.items()
        ]
        return sorted(out, key=_canonical)

    body: dict[str, Any] = {
        "format": FORMAT,
        "root": _relative(loaded.root, base),
        "files": sorted(_relative(f, base) for f in loaded.files),
        "catalog": list(policy.catalog.definition),
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


def _bundle_error(path: str, message: str) -> PolicyError:
    return PolicyError([Diagnostic.make("PC416", message, Source(path, 1, 1))])


def load_bundle(path: str | Path) -> CompiledPolicy:
    """Load a bundle written by `policyctl compile`; verifies its format and hash."""
    shown = str(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise PolicyError(
            [Diagnostic.make("PC101", f"cannot read {shown}: {exc.strerror}")]
        ) from None
    except ValueError as exc:
        raise _bundle_error(shown, f"not a bundle: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise _bundle_error(shown, f"not a {FORMAT} file")
    claimed = data.pop("contentHash", None)
    actual = "sha256:" + hashlib.sha256(_canonical(data).encode()).hexdigest()
    if claimed != actual:
        raise _bundle_error(
            shown,
            "content hash does not match: the bundle was modified; "
            "recompile it with `policyctl compile`",
        )
    index = LocationIndex()
    for table, rows in (
        ("values", data["locations"]["values"]),
        ("keys", data["locations"]["keys"]),
    ):
        target = index.values if table == "values" else index.keys
        for parts, file, line, column in rows:
            target[tuple(parts)] = Source(file, line, column)
    catalog = catalog_from_definition(data["catalog"])
    loaded = LoadedDocument(data["document"], index, data["root"], tuple(data["files"]))
    return compile_document(validate_document(loaded), index, catalog, loaded.root, loaded.files)
