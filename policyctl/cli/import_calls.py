"""`policyctl import` of call permissions: Claude Code settings.json, Gemini CLI policy TOML.

The document is written with a comment beside every entry saying where it came from, and a
header listing what was not imported exactly; every finding is also printed on stderr with
its file:line:col. A file that is not well formed (PC128) gets no document at all: a rule that
could not be read may have been a deny.
"""

from __future__ import annotations

import argparse
import io
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import EXIT_OK, EXIT_USAGE

if TYPE_CHECKING:
    from ..importers.calls import Built, CallImport

#: how many findings the document's header lists (all of them go to stderr)
HEADER_FINDINGS = 50
_FORMATS = {"claude": ("json", "Claude Code permissions"), "gemini": ("toml", "Gemini CLI rules")}


def run_calls(args: argparse.Namespace, source: str) -> int:
    from ..catalog.load import load_catalog
    from ..diagnostics import PolicyError, Severity
    from ..formats.read import parse_text, read_text
    from ..importers.calls import build_document, grant_map
    from ..settings import default_limits
    from .common import report_failure
    from .output import render_diagnostics

    fmt, what = _FORMATS[source]
    name = args.file
    limits = default_limits()
    try:
        catalog = load_catalog(args.catalog, Path.cwd())
    except PolicyError as exc:
        report_failure(exc, f"policyctl import: catalog {args.catalog} cannot be used")
        return EXIT_USAGE
    try:
        located = parse_text(read_text(Path(name), limits, name), name, fmt, limits)
    except PolicyError as exc:
        # located, but the line is not quoted: a settings file holds credentials (`env`)
        unquoted = PolicyError([replace(d, quote=False) for d in exc.diagnostics])
        report_failure(unquoted, f"policyctl import: {name} cannot be imported")
        return EXIT_USAGE
    imp = _translate(source, located, name, catalog)
    findings = sorted(imp.findings, key=lambda d: d.sort_key())
    if findings:
        print(render_diagnostics(findings, sys.stderr), file=sys.stderr)
    if any(d.severity is Severity.ERROR for d in findings):
        print(f"policyctl import: {name} is not well formed: nothing written", file=sys.stderr)
        return EXIT_USAGE
    built = build_document(imp, args.catalog, grant_map(catalog))
    refused = compile_check(built, imp)
    if refused:
        print(render_diagnostics(refused, sys.stderr), file=sys.stderr)
        if any(d.severity is Severity.ERROR for d in refused):
            print(f"policyctl import: the document for {name} does not compile", file=sys.stderr)
            return EXIT_USAGE
    text = _header(Path(name).name, what, imp) + render(built)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    left = sum(1 for d in imp.findings if d.code in ("PC125", "PC127"))
    written = sum(len(v) for v in built.document["tools"].values() if isinstance(v, list))
    print(
        f"imported {name}: {written} entr{'y' if written == 1 else 'ies'}, "
        f"{left} rule(s) not imported exactly",
        file=sys.stderr,
    )
    return EXIT_OK


#: how many rounds of dropping refused entries before the document counts as not compiling
_CHECK_ROUNDS = 3


def compile_check(built: Built, imp: CallImport) -> list[Any]:
    """Compile the document as `validate` would. An entry the policy compiler refuses beyond
    what the specifier parsers check (a look-alike command word, PC301) is dropped and
    reported as not imported (PC125) at its origin; what is left must compile. Returns the
    new findings (also added to `imp.findings`), and any error that is not one entry's."""
    import re

    from ..api import compile_loaded
    from ..diagnostics import PolicyError
    from ..document.extends import load_document
    from ..importers.calls import finding

    entry_path = re.compile(r"tools\.(allow|ask|deny)\[(\d+)\]\Z")
    out: list[Any] = []
    for _ in range(_CHECK_ROUNDS):
        virtual = Path.cwd() / "imported-policy.yaml"  # a relative --catalog resolves as above
        try:
            compile_loaded(load_document(virtual, text=render(built)))
            return out
        except PolicyError as exc:
            errors = [d for d in exc.diagnostics if d.severity.rank == 2]
        snapshot = {k: list(v) for k, v in built.document["tools"].items() if isinstance(v, list)}
        refused: list[tuple[str, str, Any]] = []
        for d in errors:
            found = entry_path.match(d.path)
            listed = snapshot.get(found[1], []) if found else []
            if not found or int(found[2]) >= len(listed):
                out.append(d)
            else:
                refused.append((found[1], listed[int(found[2])], d))
        for key, entry, d in refused:
            for origin in built.drop(key, entry):
                note = finding(
                    "PC125",
                    f'"{origin.text}" cannot be imported: as {entry} it is refused ({d.message})',
                    origin.source,
                )
                imp.findings.append(note)
                out.append(note)
        if not refused:
            return out
    return out


def _translate(source: str, located: Any, name: str, catalog: Any) -> CallImport:
    if source == "claude":
        from ..importers.claude import import_claude

        return import_claude(located, name, catalog)
    from ..importers.gemini import import_gemini

    return import_gemini(located, name, catalog)


def _header(file: str, what: str, imp: CallImport) -> str:
    from ..escape import printable_line

    lines = [
        f"Imported by policyctl from {file} ({what}).",
        f"Each entry's comment says where it came from: line:column in {file}, or the",
        f"behaviour of {imp.source_name} it reproduces. Check it with: policyctl validate",
    ]
    shown = [d for d in imp.findings if d.code in ("PC125", "PC126", "PC127", "PC129")]
    if shown:
        lines.append("To review (stderr has each with its file:line:col):")
        for d in sorted(shown, key=lambda d: d.sort_key())[:HEADER_FINDINGS]:
            where = f"{d.source.line}:{d.source.column} " if d.source else ""
            lines.append(f"  {where}{d.code} {d.message}")
        if len(shown) > HEADER_FINDINGS:
            lines.append(f"  ... and {len(shown) - HEADER_FINDINGS} more")
    return "".join(f"# {printable_line(line)}\n" for line in lines)


def render(built: Built) -> str:
    """The document as YAML, each list entry with its remark as an end-of-line comment."""
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    def commented(node: Any, key: str | None = None) -> Any:
        if isinstance(node, dict):
            return CommentedMap((k, commented(v, k)) for k, v in node.items())
        if isinstance(node, list):
            seq = CommentedSeq(commented(v) for v in node)
            for i, item in enumerate(node):
                remark = built.remarks.get((key or "", item)) if isinstance(item, str) else None
                if remark:
                    seq.yaml_add_eol_comment(f"# {remark}", i)
            return seq
        return node

    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096  # one entry per line, whatever its length
    # entries come from the imported file: anything but ASCII is written as a \uXXXX escape, so
    # no bidi override or line separator reaches a terminal or an editor raw
    yaml.allow_unicode = False
    buffer = io.StringIO()
    yaml.dump(commented(built.document), buffer)
    return buffer.getvalue()
