"""Findings output for CI and people: text, json, SARIF 2.1.0, GitHub workflow commands."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from .. import __version__
from ..diagnostics import CODES, Diagnostic, Severity, Source
from .output import Painter, count_summary, render_diagnostic

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


#: The base every relative SARIF URI is resolved against (SARIF 2.1.0, section 3.14.14).
SRCROOT = "%SRCROOT%"


def _root(root: str | None) -> Path:
    return Path(os.path.abspath(root if root is not None else os.getcwd()))


def _relative(path: str, root: Path) -> PurePosixPath | None:
    """`path` relative to `root`, as written (symlinks kept) or else after resolving them."""
    for candidate, base in (
        (Path(os.path.abspath(path)), root),
        (Path(path).resolve(), root.resolve()),
    ):
        try:
            return PurePosixPath(candidate.relative_to(base).as_posix())
        except ValueError:
            continue
    return None


def _uri(path: str, root: str | None = None) -> str:
    """A path for GitHub annotations: relative to the root when inside it."""
    rel = _relative(path, _root(root))
    return rel.as_posix() if rel is not None else Path(path).as_posix()


def artifact_location(path: str, root: str | None = None) -> dict[str, str]:
    """A SARIF artifactLocation: a relative, percent-encoded URI against `%SRCROOT%` when the
    file is inside the root (whether it was named by a relative or an absolute path), else an
    absolute `file:` URI. Code scanning matches relative URIs to files of the repository."""
    rel = _relative(path, _root(root))
    if rel is None:
        return {"uri": Path(path).resolve().as_uri()}
    return {"uri": quote(rel.as_posix()), "uriBaseId": SRCROOT}


def _uri_base_ids(root: str | None) -> dict[str, Any]:
    """Where `%SRCROOT%` is. Only an explicit `--sarif-root` puts an absolute path in the log;
    by default the log stays portable and says the base is the working directory."""
    if root is None:
        return {SRCROOT: {"description": {"text": "the working directory policyctl ran in"}}}
    return {SRCROOT: {"uri": _root(root).as_uri().rstrip("/") + "/"}}


def diagnostic_json(d: Diagnostic) -> dict[str, Any]:
    return {
        "code": d.code,
        "severity": d.severity.value,
        "message": d.message,
        "file": d.source.file if d.source else None,
        "line": d.source.line if d.source else None,
        "column": d.source.column if d.source else None,
        "path": d.path or None,
        "fix": d.fix,
    }


def render_json(
    diags: Sequence[Diagnostic], files: Sequence[str], hidden: int, all_found: Sequence[Diagnostic]
) -> str:
    out = {
        "version": 1,
        "files": list(files),
        "diagnostics": [diagnostic_json(d) for d in diags],
        "hidden": hidden,
        "summary": count_summary(all_found),
    }
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"


def render_sarif(diags: Sequence[Diagnostic], root: str | None = None) -> str:
    used = sorted({d.code for d in diags})
    rules = [
        {
            "id": code,
            "name": CODES[code].title.title().replace(" ", "").replace(",", ""),
            "shortDescription": {"text": CODES[code].title},
            "fullDescription": {"text": CODES[code].explanation},
            "defaultConfiguration": {"level": _SARIF_LEVEL[CODES[code].severity]},
            "help": {"text": f"policyctl explain {code}"},
        }
        for code in used
    ]
    results = [
        sarif_result(
            d.code,
            used.index(d.code),
            _SARIF_LEVEL[d.severity],
            d.message + (f" ({d.fix})" if d.fix else ""),
            d.source,
            root,
        )
        for d in diags
    ]
    return sarif_log(rules, results, root)


def sarif_result(
    rule_id: str,
    rule_index: int,
    level: str,
    text: str,
    source: Source | None,
    root: str | None = None,
) -> dict[str, Any]:
    """One SARIF result, located when the finding has a source."""
    result: dict[str, Any] = {
        "ruleId": rule_id,
        "ruleIndex": rule_index,
        "level": level,
        "message": {"text": text},
    }
    if source is not None:
        result["locations"] = [
            {
                "physicalLocation": {
                    "artifactLocation": artifact_location(source.file, root),
                    "region": {"startLine": source.line, "startColumn": source.column},
                }
            }
        ]
    return result


def sarif_log(
    rules: list[dict[str, Any]], results: list[dict[str, Any]], root: str | None = None
) -> str:
    """A SARIF 2.1.0 log of one policyctl run (`root`: see `artifact_location`)."""
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "policyctl", "version": __version__, "rules": rules}},
                "originalUriBaseIds": _uri_base_ids(root),
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def _gh_escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def render_github(diags: Sequence[Diagnostic]) -> str:
    lines = []
    for d in diags:
        kind = {"error": "error", "warning": "warning", "info": "notice"}[d.severity.value]
        props = []
        if d.source is not None:
            props += [
                f"file={_gh_escape(_uri(d.source.file), True)}",
                f"line={d.source.line}",
                f"col={d.source.column}",
            ]
        props.append(f"title={_gh_escape(d.code + ' ' + CODES[d.code].title, True)}")
        message = d.message + (f" ({d.fix})" if d.fix else "")
        lines.append(f"::{kind} {','.join(props)}::{_gh_escape(message)}")
    return "\n".join(lines) + ("\n" if lines else "")


def render_text(
    diags: Sequence[Diagnostic], files: Sequence[str], hidden: int, all_found: Sequence[Diagnostic]
) -> str:
    paint = Painter(sys.stdout)
    parts = [render_diagnostic(d, paint) for d in diags]
    more = f" ({hidden} more not shown; raise --max-errors)" if hidden else ""
    checked = f"{len(files)} file{'s' * (len(files) != 1)}"
    parts.append(f"{checked} checked: {count_summary(all_found)}{more}")
    return "\n".join(parts) + "\n"
