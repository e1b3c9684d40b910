"""`policyctl import FILE`: convert another agent's tool policy to policyctl YAML.

OpenClaw configs (JSON5) are converted here; Claude Code settings and Gemini CLI policy files
(call permissions) by `import_calls`. Without `--from`, the file's content decides: a `.toml`
file is Gemini CLI's, a JSON object with `permissions` and none of OpenClaw's sections is
Claude Code's, anything else OpenClaw's.
"""

from __future__ import annotations

import argparse
import io
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..importers.json5_comments import Comment
    from ..importers.openclaw import ImportResult

from .common import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, subcommand

HELP = (
    "convert the tool policy of an OpenClaw config, Claude Code settings or a Gemini CLI "
    "policy file into a policyctl YAML file"
)
EXAMPLE = """examples:
  policyctl import ~/.openclaw/openclaw.json > policy.yaml
  policyctl import openclaw.json -o policy.yaml --catalog openclaw-2026.4
  policyctl import .claude/settings.json -o policy.yaml
  policyctl import ~/.gemini/policies/rules.toml --from gemini -o policy.yaml
"""
SOURCES = ("openclaw", "claude", "gemini")
#: top-level sections of an OpenClaw config (a file with one of them is never Claude Code's)
_OPENCLAW_SECTIONS = frozenset({"tools", "agents", "channels", "mcp", "session", "gateway"})


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subcommand(sub, "import", HELP, EXAMPLE)
    p.add_argument(
        "file",
        help="OpenClaw config (JSON5), Claude Code settings.json or Gemini CLI policy TOML",
    )
    p.add_argument(
        "--from",
        dest="source",
        choices=SOURCES,
        help="the file's format (default: decided by its content)",
    )
    p.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    p.add_argument(
        "--catalog",
        default="openclaw",
        help="catalog to name in the output (Claude Code and Gemini CLI tools map to its tools)",
    )
    p.set_defaults(run=run)


class _Unusable(Exception):
    """The config cannot be imported; the message has been printed or is the reason."""


def run(args: argparse.Namespace) -> int:
    from ..catalog.load import load_catalog
    from ..diagnostics import PolicyError
    from ..importers.json5_comments import json5_comments
    from ..importers.openclaw import import_openclaw, source_path
    from .common import report_failure
    from .import_calls import run_calls

    if args.source in ("claude", "gemini"):
        return run_calls(args, args.source)
    if args.source is None and args.file.lower().endswith(".toml"):
        return run_calls(args, "gemini")
    if args.source is None and _is_claude_settings(args.file):
        return run_calls(args, "claude")
    try:
        text, config = _read_config(args.file)
    except _Unusable as exc:
        if str(exc):
            print(f"policyctl import: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.source is None and "permissions" in config and not _OPENCLAW_SECTIONS & set(config):
        # Claude Code's shape, but not strict JSON (a comment, a trailing comma): say where
        return run_calls(args, "claude")
    try:
        catalog = load_catalog(args.catalog, Path.cwd())
    except PolicyError as exc:
        report_failure(exc, f"policyctl import: catalog {args.catalog} cannot be used")
        return EXIT_USAGE
    # chat-channel tool ids: the sandbox's default deny names that are no tool nor alias
    channel_tools = {
        n for n in catalog.sandbox_deny if n not in catalog.tool_ids and n not in catalog.aliases
    }
    result = import_openclaw(config, channel_tools)
    where, errors = _locator(args.file, text)
    for problem in result.problems:
        first, *others = problem.at
        also = "".join(f" (also at {where(p)})" for p in others)
        fix = f" (fix: {problem.fix})" if problem.fix else ""
        errors.append(f"{where(first)}: error {problem.code}: {problem.message}{also}{fix}")
    if errors:
        # fail closed: an import that would be looser than its source writes nothing
        for line in errors:
            print(line, file=sys.stderr)
        print(
            f"policyctl import: {args.file} not imported: {len(errors)} setting(s) "
            "would be looser in policyctl than in the source",
            file=sys.stderr,
        )
        return EXIT_FINDINGS
    doc = {"catalog": args.catalog, **result.document}
    body, lost = render_yaml(doc, result, json5_comments(text))
    header = (
        f"# Imported by policyctl from {Path(args.file).name}.\n"
        "# Check it with: policyctl validate <this file>\n"
        "# Comments of the original are kept beside the keys they describe (as written:\n"
        "# review them), comments on left-out sections are not (see stderr for their lines).\n"
    )
    if args.output:
        Path(args.output).write_text(header + body, encoding="utf-8")
    else:
        sys.stdout.write(header + body)
    for path in result.left_out:
        print(f"{where(source_path(path))}: left out (PC326): {path}", file=sys.stderr)
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    for line in lost:
        print(line, file=sys.stderr)
    print(f"imported {args.file}: {len(result.left_out)} section(s) left out", file=sys.stderr)
    return EXIT_OK


def _locator(name: str, text: str) -> tuple[Callable[[tuple[str | int, ...]], str], list[str]]:
    """file:line:col of a source key path (of the nearest enclosing key that is written), and
    an error (PC323) for each key written twice in one object: the parser keeps only the
    later value, so the earlier one's denies would be lost without a word."""
    from ..importers.json5_comments import json5_positions

    positions, repeated = json5_positions(text)
    errors = []
    for path, (line, column) in repeated:
        dotted = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)[1:]
        first = positions[path]
        errors.append(
            f"{name}:{line}:{column}: error PC323: {dotted} is written twice in one object, "
            f"only this later value would be read (also at {name}:{first[0]}:{first[1]}) "
            "(fix: merge the two into one key, keeping every deny)"
        )

    def where(path: tuple[str | int, ...]) -> str:
        for cut in range(len(path), 0, -1):
            found = positions.get(path[:cut])
            if found is not None:
                return f"{name}:{found[0]}:{found[1]}"
        return f"{name}:1:1"

    return where, errors


def _is_claude_settings(name: str) -> bool:
    """Strict JSON with `permissions` and none of OpenClaw's sections. Read with the fast JSON
    reader (a Claude Code settings file is JSON; JSON5's parser takes a minute on 1 MB);
    anything that is not strict JSON is left to the OpenClaw path, which reports it."""
    from ..diagnostics import PolicyError
    from ..formats.read import parse_text, read_text
    from ..settings import default_limits

    limits = default_limits()
    try:
        top = parse_text(read_text(Path(name), limits, name), name, "json", limits)
    except PolicyError:
        return False
    return "permissions" in top and not _OPENCLAW_SECTIONS & set(top)


def _read_config(name: str) -> tuple[str, dict[str, Any]]:
    """The text and the parsed object, under the limits policy files have (size, encoding,
    nesting): an OpenClaw config is as untrusted as a policy file."""
    import json5

    from ..diagnostics import Diagnostic, PolicyError, Source
    from ..formats.read import read_text
    from ..importers.json5_comments import nesting_too_deep
    from ..settings import default_limits
    from .common import report_failure

    limits = default_limits()
    try:
        text = read_text(Path(name), limits, name)
        deep_at = nesting_too_deep(text, limits.max_depth)
        if deep_at is not None:
            raise PolicyError(
                [
                    Diagnostic.make(
                        "PC107",
                        f"nesting deeper than {limits.max_depth} levels",
                        Source(name, deep_at, 1),
                        fix="raise POLICYCTL_MAX_DEPTH if this is intended",
                    )
                ]
            )
    except PolicyError as exc:
        report_failure(exc, f"policyctl import: {name} cannot be imported")
        raise _Unusable() from None
    # json5's parser recurses ~15 frames per nesting level: make room for what the depth
    # check above admits (bounded, so a raised POLICYCTL_MAX_DEPTH cannot exhaust the stack).
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, min(20 * limits.max_depth + 1000, 20_000)))
    try:
        config = json5.loads(text)
    except ValueError as exc:
        raise _Unusable(f"{name} is not JSON5: {exc}") from None
    except RecursionError:
        raise _Unusable(f"{name} nests too deeply to be read") from None
    finally:
        sys.setrecursionlimit(previous)
    if not isinstance(config, dict):
        raise _Unusable(f"{name}: the top level must be an object")
    return text, config


def render_yaml(
    doc: dict[str, Any], result: ImportResult, comments: list[Comment]
) -> tuple[str, list[str]]:
    """The YAML text with the original's comments (and the import's remarks) in place, and a
    line for each comment that could not be kept (by line number only: a comment next to a
    left-out token may quote the token)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    def commented(node: Any) -> Any:
        if isinstance(node, dict):
            return CommentedMap((k, commented(v)) for k, v in node.items())
        if isinstance(node, list):
            return CommentedSeq(commented(v) for v in node)
        return node

    root = commented(doc)
    before: dict[tuple[Any, ...], list[str]] = {}
    after: dict[tuple[Any, ...], list[str]] = {}
    start: list[str] = []
    lost: list[str] = []
    left_out_values = _secret_values(result.config) - _strings(doc)
    for c in comments:
        if _may_hold_a_secret(c.text, left_out_values):
            lost.append(f"comment not kept: line {c.line} (it may quote a left-out value)")
            continue
        if not c.path:
            start.append(c.text)
            continue
        out = result.output_path(c.path)
        if _find(root, out) is None:
            where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in c.path)[1:]
            lost.append(f"comment not kept: line {c.line} (on {where}, which is left out)")
            continue
        (after if c.trailing or isinstance(_find(root, out[:-1]), list) else before).setdefault(
            out, []
        ).append(c.text)
    for out, remark in result.remarks.items():
        if _find(root, out) is not None:
            after.setdefault(out, []).append(remark)
    for out, texts in before.items():
        parent = _find(root, out[:-1])
        parent.yaml_set_comment_before_after_key(
            out[-1], before="\n".join(texts), indent=2 * (len(out) - 1)
        )
    for out, texts in after.items():
        parent = _find(root, out[:-1])
        parent.yaml_add_eol_comment("# " + "; ".join(texts), out[-1])
    if start:
        root.yaml_set_start_comment("\n".join(start))
    text = _dump(root)
    if comments and not _same_data(text, doc):
        # ruamel writes some placements (an end-of-line comment on an empty sequence item, or
        # on a mapping inside one) as different or broken YAML: the data wins over comments
        listed = {line for line in lost}
        lost.extend(
            line
            for c in comments
            if (line := f"comment not kept: line {c.line} (no place for it)") not in listed
            and not any(kept.startswith(f"comment not kept: line {c.line} ") for kept in listed)
        )
        return _dump(commented(doc)), lost
    return text, lost


def _dump(root: Any) -> str:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    buffer = io.StringIO()
    yaml.dump(root, buffer)
    return buffer.getvalue()


def _same_data(text: str, doc: dict[str, Any]) -> bool:
    """Whether the written YAML reads back as the document (comments must never change data)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        return bool(YAML(typ="safe").load(text) == doc)
    except YAMLError:  # ruamel can place a comment where it breaks the structure
        return False


# Shapes of common credentials (Slack, GitHub, OpenAI-style and AWS keys, JWTs).
_SECRET_SHAPES = re.compile(
    r"(xox[abposr]-|xapp-|gh[pousr]_|github_pat_|sk-|AKIA|eyJ)[A-Za-z0-9_\-.]{6,}"
)


def _may_hold_a_secret(text: str, left_out_values: set[str]) -> bool:
    """A comment that quotes a value the import left out (a token, a URL, a command), or
    that looks like a credential, is not copied: the output must never carry a secret."""
    return bool(_SECRET_SHAPES.search(text)) or any(v in text for v in left_out_values)


_SENSITIVE_KEY = re.compile(r"token|secret|passw|key|auth|cred|env|header|cookie", re.I)


def _secret_values(node: Any, sensitive: bool = False) -> set[str]:
    """Strings of a parsed config that may be credentials: values under a key that sounds
    like one (token, secret, env, headers, ...), and long strings mixing letters and digits."""
    if isinstance(node, dict):
        return set().union(
            *(
                _secret_values(v, sensitive or bool(_SENSITIVE_KEY.search(str(k))))
                for k, v in node.items()
            )
        )
    if isinstance(node, list):
        return set().union(*(_secret_values(v, sensitive) for v in node))
    if not isinstance(node, str) or len(node) < 6:
        return set()
    mixed = len(node) >= 12 and any(c.isdigit() for c in node) and any(c.isalpha() for c in node)
    return {node} if sensitive or mixed else set()


def _strings(node: Any) -> set[str]:
    """Every string value of a document."""
    if isinstance(node, dict):
        return set().union(*(_strings(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_strings(v) for v in node))
    return {node} if isinstance(node, str) else set()


def _find(root: Any, path: tuple[Any, ...]) -> Any:
    """The node at `path`, or None when the import did not keep it."""
    node = root
    for part in path:
        inside_map = isinstance(node, dict) and part in node
        inside_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if not (inside_map or inside_list):
            return None
        node = node[part]
    return node
