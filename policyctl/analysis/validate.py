"""`validate` as one pass that reports every problem of a file, whatever stage finds it.

The stages stop at their first failing input when a policy is *used* (`load_policy` refuses a
file with any error). An operator fixing a file wants all of its problems at once, so here
each stage continues on the parts that are sound: the parts with schema errors are set aside
and the rest is compiled; the scopes with compile errors are set aside and the rest is
checked. Setting aside only ever removes keys, so the later stages see a narrower file and
report nothing about what they did not see. Only a file that cannot be read or parsed stops
early; duplicate keys are all reported, the first value of each kept, and the rest checked.

It also recognises the other files that sit next to policies: a policy test file
(`*.test.yaml`) is validated as a test file (one with another name is refused as a policy, and
told how to name it), and a bundle from `policyctl compile` is verified and checked as the
policy it holds, instead of being reported as a policy full of unknown keys.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ..diagnostics import Diagnostic, PolicyError, Severity, Source
from ..document.extends import LoadedDocument, load_document
from ..formats.files import policy_roots

if TYPE_CHECKING:
    from ..document.model import PolicyDocument

_TEST_NAME = re.compile(r".*\.test\.(ya?ml|toml|json)\Z")
_BUNDLE_NAME = re.compile(r".*\.bundle\.json\Z")
_ROUNDS = 8


def validate_path(path: str, *, strict: bool = False, max_contexts: int = 2000) -> list[Diagnostic]:
    """Every diagnostic of one file: load, schema, compile, then the semantic checks."""
    from dataclasses import replace

    found = _validate_path(path, strict=strict, max_contexts=max_contexts)
    if not any(d.severity is Severity.ERROR for d in found):
        return found
    # A file that does not validate never has the lines of other files quoted (files it
    # extends, its catalog): they may be any file of the tree, and this output goes to CI logs.
    return [
        replace(d, quote=False) if d.source is not None and d.source.file != path else d
        for d in found
    ]


def _validate_path(path: str, *, strict: bool, max_contexts: int) -> list[Diagnostic]:
    if _BUNDLE_NAME.match(Path(path).name):
        return _validate_bundle(path, strict, max_contexts)
    duplicates: list[Diagnostic] = []
    try:
        # duplicate keys are reported, the first value kept, and the rest of the file checked
        loaded = load_document(path, problems=duplicates)
    except PolicyError as exc:
        return [*duplicates, *exc.diagnostics]
    data = loaded.data
    if _TEST_NAME.match(Path(path).name):
        return [*duplicates, *_validate_test_file(path, loaded)]
    if _looks_like_test_file(data):
        # a policy file that holds a test file: refused as a policy (the runtime would refuse
        # it too), with what it is and how to name it
        stem = Path(path).name.rsplit(".", 1)
        renamed = f"{stem[0]}.test.{stem[1] if len(stem) > 1 else 'yaml'}"
        misnamed = _note(
            "PC435",
            f"{path} holds a policy test file (policy: and cases: or invariants:), not a policy",
            path,
            f"rename it to {renamed} and run `policyctl test {Path(path).with_name(renamed)}`",
        )
        return [*duplicates, misnamed, *_validate_test_file(path, loaded)[1:]]
    if data.get("format") == "policyctl-bundle/1":
        return _validate_bundle(path, strict, max_contexts)
    return [*duplicates, *validate_loaded(loaded, strict=strict, max_contexts=max_contexts)]


def _looks_like_test_file(data: dict[str, Any]) -> bool:
    return "policy" in data and ("cases" in data or "invariants" in data)


def validate_loaded(
    loaded: LoadedDocument, *, strict: bool = False, max_contexts: int = 2000
) -> list[Diagnostic]:
    from ..api import _gc_paused
    from ..catalog.load import load_catalog
    from ..compile.scopes import compile_document, relative_catalog_dir
    from ..document.model import PolicyDocument
    from ..document.validate import policy_schema_diagnostics
    from ..settings import default_limits
    from .checks import check_policy

    # the loader's warnings: legacy shapes migrated, keys merged across spellings
    found: list[Diagnostic] = list(loaded.diagnostics)
    # schema: every error of the file, then the rest
    try:
        doc = PolicyDocument.model_validate(loaded.data)
        data = loaded.data
    except ValidationError as exc:
        found.extend(policy_schema_diagnostics(exc, loaded))
        sound = _sound_part(_without(loaded.data, _error_paths(exc, loaded.data)))
        if sound is None:
            return found
        doc, data = sound
    try:
        catalog = load_catalog(
            doc.catalog,
            relative_catalog_dir(loaded.locations, loaded.root),
            loaded.locations.value(("catalog",)),
            roots=policy_roots(Path(loaded.root), default_limits().extends_roots),
        )
    except PolicyError as exc:
        return [*found, *exc.diagnostics]  # checked against another catalog, all would be wrong
    # compile: every compile error, then the rest without the scopes they are in
    for _ in range(_ROUNDS):
        try:
            with _gc_paused():  # as `load_policy` compiles: many long-lived acyclic objects
                policy = compile_document(doc, loaded.locations, catalog, loaded.root, loaded.files)
        except PolicyError as exc:
            found.extend(d for d in exc.diagnostics if d not in found)
            paths = [p for p in (parse_path(d.path) for d in exc.errors) if p]
            sound = _sound_part(_without(data, paths))
            if sound is None or sound[1] == data:
                return found
            doc, data = sound
            continue
        found.extend(d for d in policy.diagnostics if d not in found)
        found.extend(check_policy(policy, strict=strict, max_contexts=max_contexts))
        return found
    return found


def _error_paths(exc: ValidationError, data: Any) -> list[tuple[Any, ...]]:
    from ..formats.schema_errors import error_path

    return [error_path(err, data) for err in exc.errors()]


def _sound_part(data: dict[str, Any]) -> tuple[PolicyDocument, dict[str, Any]] | None:
    """The document once what still fails the schema is set aside (a blanked list item of a
    list of mappings, then that list); its errors are consequences, already reported."""
    from ..document.model import PolicyDocument

    for _ in range(_ROUNDS):
        try:
            return PolicyDocument.model_validate(data), data
        except ValidationError as exc:
            narrower = _without(data, _error_paths(exc, data))
            if narrower == data:
                return None
            data = narrower
    return None


# -- setting aside the unsound parts ------------------------------------------------------------

_STEP = re.compile(r'\["(.*?)"\]|\[(\d+)\]|\.?([A-Za-z0-9_-]+)')


def parse_path(text: str) -> tuple[str | int, ...]:
    """`tools.toolsBySender["id:x"].deny[2]` -> `("tools", "toolsBySender", "id:x", "deny", 2)`
    (the inverse of `located.format_path`)."""
    out: list[str | int] = []
    pos = 0
    while pos < len(text):
        m = _STEP.match(text, pos)
        if m is None:
            return tuple(out)
        quoted, index, plain = m.groups()
        out.append(int(index) if index is not None else quoted if quoted is not None else plain)
        pos = m.end()
    return tuple(out)


def _without(data: dict[str, Any], paths: Iterable[tuple[Any, ...]]) -> dict[str, Any]:
    """A copy of `data` without the part that holds each path.

    A bad list item becomes `""` (an entry that compiles to nothing) rather than being removed:
    removing it would shift the positions every later item's location is recorded under. If
    `""` is no better there (a list of mappings), the next round sets the whole list aside."""
    out = copy.deepcopy(data)
    for path in paths:
        node: Any = out
        holder: tuple[Any, Any] | None = None
        for part in path:
            if isinstance(node, dict) and part in node:
                holder = (node, part)
                node = node[part]
            elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
                holder = (node, part) if node[part] != "" else holder
                node = node[part]
            else:
                break
        if holder is None:
            continue
        container, step = holder
        if isinstance(container, list):
            container[step] = ""
        else:
            container.pop(step, None)
    return out


# -- other files next to policies ---------------------------------------------------------------


def _note(code: str, message: str, file: str, fix: str | None = None) -> Diagnostic:
    return Diagnostic.make(code, message, Source(file, 1, 1), "", fix)


def _validate_test_file(path: str, loaded: LoadedDocument) -> list[Diagnostic]:
    from .testing import PolicyTestFile, load_test_file

    try:
        spec, _ = load_test_file(path)
    except PolicyError as exc:
        return [
            _note(
                "PC433",
                f"{path} is a policy test file; validated as one",
                path,
                f"run `policyctl test {path}` to run its cases",
            ),
            *exc.diagnostics,
        ]
    assert isinstance(spec, PolicyTestFile)
    out = [
        _note(
            "PC433",
            f"{path} is a policy test file; its schema is valid",
            path,
            f"run `policyctl test {path}` to run its cases",
        )
    ]
    from .testnames import named_policy_path

    try:
        named_policy_path(path, spec.policy, loaded.locations.value(("policy",)))
    except PolicyError as exc:
        return [*out, *exc.diagnostics]
    policy_path = Path(path).parent / spec.policy
    if not policy_path.exists():
        out.append(
            Diagnostic.make(
                "PC101",
                f"the policy this test file names does not exist: {policy_path}",
                loaded.locations.value(("policy",)),
                "policy",
                "policy is relative to the test file",
            )
        )
    return out


def _validate_bundle(path: str, strict: bool, max_contexts: int) -> list[Diagnostic]:
    from ..compile.bundle import load_bundle
    from .checks import check_policy

    try:
        policy = load_bundle(path)
    except PolicyError as exc:
        return list(exc.diagnostics)
    note = _note(
        "PC434",
        f"{path} is a policyctl bundle; its content hash matches, and the policy it holds "
        "was checked",
        path,
        "validate the policy files it was compiled from to edit them",
    )
    checked = check_policy(policy, strict=strict, max_contexts=max_contexts)
    return [note, *policy.diagnostics, *checked]
