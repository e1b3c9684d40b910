"""Read: bytes -> located values, for YAML, TOML and JSON.

YAML is read from ruamel.yaml's event stream, never through a constructor: no tag can build
an object, aliases are counted (not expanded) so an alias bomb fails after a few events, depth
is checked as events arrive, duplicate keys are refused, and every key and item keeps its line
and column. JSON goes through the same reader (JSON is YAML 1.2), so it is located as well.
TOML is parsed by tomllib and located by `tomlpos`.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path as FsPath
from typing import Any

from ..diagnostics import Diagnostic, PolicyError, Source
from ..located import LocMap, LocSeq
from ..settings import Limits
from .files import NotRegularFile, TooLarge, read_capped

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib


def fail(
    code: str, message: str, source: Source | None = None, fix: str | None = None, path: str = ""
) -> PolicyError:
    return PolicyError([Diagnostic.make(code, message, source, path=path, fix=fix)])


# -- bytes -> text ---------------------------------------------------------------------------


def read_text(path: FsPath, limits: Limits, shown: str | None = None) -> str:
    """A regular file's text, read with a hard byte cap (see `files`)."""
    name = shown or str(path)
    try:
        raw = read_capped(path, limits.max_file_bytes)
    except TooLarge:
        raise fail(
            "PC106",
            f"file is larger than the limit of {limits.max_file_bytes} bytes",
            Source(name, 1, 1),
            fix="raise POLICYCTL_MAX_FILE_BYTES if this is intended",
        ) from None
    except NotRegularFile:
        raise fail(
            "PC112",
            f"{name} is not a regular file",
            Source(name, 1, 1),
            fix="name a policy file, not a device, FIFO or directory",
        ) from None
    except OSError as exc:
        raise fail("PC101", f"cannot read {name}: {exc.strerror or exc}") from None
    return decode(raw, name, limits)


def decode(raw: bytes, name: str, limits: Limits) -> str:
    if len(raw) > limits.max_file_bytes:
        raise fail(
            "PC106",
            f"file is {len(raw)} bytes; the limit is {limits.max_file_bytes}",
            Source(name, 1, 1),
        )
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise fail(
            "PC102",
            "file is UTF-16; policy files must be UTF-8",
            Source(name, 1, 1),
            fix="re-save the file as UTF-8",
        )
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]  # a UTF-8 byte order mark is harmless: accept and drop it
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise fail(
            "PC102",
            f"byte 0x{raw[exc.start]:02x} is not valid UTF-8",
            Source(name, line, column),
            fix="re-save the file as UTF-8",
        ) from None


def detect_format(name: str) -> str:
    lower = name.lower()
    if lower.endswith(".toml"):
        return "toml"
    if lower.endswith(".json"):
        return "json"
    return "yaml"


def parse_text(
    text: str, name: str, fmt: str, limits: Limits, problems: list[Diagnostic] | None = None
) -> LocMap:
    """Text -> a located top-level mapping (an empty file is an empty mapping).

    Duplicate keys are refused; with `problems`, they are reported there instead and the
    first value is kept, so `validate` can go on checking the rest of the file."""
    if fmt == "toml":
        located = _parse_toml(text, name, limits)
        if not located:
            raise _empty(name)
        return located
    if fmt == "json":
        from .jsonpos import parse_json

        value = parse_json(text, name, limits, problems)
    else:
        value = _YamlReader(name, limits).read(text, problems)
    if value is None:
        raise _empty(name)
    if not isinstance(value, LocMap):
        raise fail(
            "PC202",
            "the top level of a policy file must be a mapping",
            getattr(value, "src", None) or Source(name, 1, 1),
        )
    return value


def _empty(name: str) -> PolicyError:
    # Fail closed: an empty document would be a policy with no rules, that is every tool for
    # every run, and an empty file is what a half-finished in-place write looks like.
    return fail(
        "PC111",
        "the file is empty (or holds only comments)",
        Source(name, 1, 1),
        fix="write {} if a policy without rules is really intended",
    )


# -- YAML (and JSON) --------------------------------------------------------------------------

_NULL = re.compile(r"(?:~|null|Null|NULL|)\Z")
_TRUE = re.compile(r"(?:true|True|TRUE)\Z")
_FALSE = re.compile(r"(?:false|False|FALSE)\Z")
_INT = re.compile(r"[-+]?[0-9]+\Z")
_INT_OCT = re.compile(r"0o[0-7]+\Z")
_INT_HEX = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_SPECIAL_FLOAT = {
    ".inf": float("inf"),
    "+.inf": float("inf"),
    "-.inf": float("-inf"),
    ".nan": float("nan"),
}
_SURROGATE = re.compile("[\ud800-\udfff]")
_STD = "tag:yaml.org,2002:"
_PLAIN_TAGS = {f"{_STD}{t}" for t in ("str", "int", "float", "bool", "null", "map", "seq")} | {"!"}


def resolve_plain(text: str) -> Any:
    """YAML 1.2 core schema for a plain (unquoted) scalar."""
    if _NULL.match(text):
        return None
    if _TRUE.match(text):
        return True
    if _FALSE.match(text):
        return False
    if _INT.match(text):
        return int(text)
    if _INT_OCT.match(text):
        return int(text[2:], 8)
    if _INT_HEX.match(text):
        return int(text[2:], 16)
    if _FLOAT.match(text):
        return float(text)
    return _SPECIAL_FLOAT.get(text.lower(), text)


def _tagged_scalar(tag: str, text: str, src: Source) -> Any:
    kind = tag[len(_STD) :] if tag.startswith(_STD) else "str"
    value = resolve_plain(text)
    expected = {"str": str, "int": int, "float": float, "bool": bool, "null": type(None)}
    if kind == "str":
        return text
    if kind == "float" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, expected.get(kind, str)) or (
        kind == "int" and isinstance(value, bool)
    ):
        raise fail("PC202", f"{text!r} is not a valid !!{kind}", src)
    return value


class _Frame:
    __slots__ = ("anchor", "container", "key", "key_src", "size")

    def __init__(self, container: LocMap | LocSeq, anchor: str | None) -> None:
        self.container = container
        self.anchor = anchor
        self.key: str | None = None
        self.key_src: Source | None = None
        self.size = 1


class _YamlReader:
    def __init__(self, name: str, limits: Limits) -> None:
        self.name = name
        self.limits = limits
        self.stack: list[_Frame] = []
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.total = 0
        self.written = 0
        self.aliased = 0
        self.root: Any = None
        self.documents = 0
        self.duplicates: list[Diagnostic] = []
        self.dropped: list[tuple[LocMap, str]] = []

    def src(self, event: Any) -> Source:
        mark = event.start_mark
        return Source(self.name, mark.line + 1, mark.column + 1)

    def read(self, text: str, problems: list[Diagnostic] | None = None) -> Any:
        from ruamel.yaml import YAML
        from ruamel.yaml.error import MarkedYAMLError, YAMLError

        parser = YAML(typ="safe", pure=True)
        try:
            for event in parser.parse(text):
                self.on_event(event)
        except PolicyError:
            raise
        except MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            where = Source(self.name, mark.line + 1, mark.column + 1) if mark else None
            problem = exc.problem or exc.context or "invalid YAML"
            raise fail("PC103", f"YAML syntax error: {problem}", where) from None
        except (YAMLError, ValueError) as exc:
            raise fail("PC103", f"YAML syntax error: {exc}", Source(self.name, 1, 1)) from None
        except RecursionError:
            raise fail("PC107", "nesting too deep to parse", Source(self.name, 1, 1)) from None
        if self.duplicates and problems is None:
            raise PolicyError(self.duplicates)
        problems = problems if problems is not None else []
        problems.extend(self.duplicates)
        for container, marker in self.dropped:
            container.pop(marker, None)
            container.key_src.pop(marker, None)
            container.val_src.pop(marker, None)
        return self.root

    def on_event(self, event: Any) -> None:
        kind = type(event).__name__
        if kind == "ScalarEvent":
            self.on_scalar(event)
        elif kind in ("MappingStartEvent", "SequenceStartEvent"):
            self.check_tag(event, _STD + ("map" if kind == "MappingStartEvent" else "seq"))
            if len(self.stack) >= self.limits.max_depth:
                raise fail(
                    "PC107", f"nesting deeper than {self.limits.max_depth} levels", self.src(event)
                )
            self.require_value_slot(event)
            container: LocMap | LocSeq = (
                LocMap(self.src(event)) if kind == "MappingStartEvent" else LocSeq(self.src(event))
            )
            self.count(1, event)
            self.stack.append(_Frame(container, event.anchor))
        elif kind in ("MappingEndEvent", "SequenceEndEvent"):
            frame = self.stack.pop()
            if frame.anchor is not None:
                self.anchors[frame.anchor] = (frame.container, frame.size)
            self.emit(frame.container, frame.container.src, frame.size, counted=True)
        elif kind == "AliasEvent":
            if event.anchor not in self.anchors:
                raise fail("PC103", f"unknown alias *{event.anchor}", self.src(event))
            value, size = self.anchors[event.anchor]
            self.require_value_slot(event)
            self.aliased += size
            if self.aliased > self.limits.max_alias_nodes:
                raise fail(
                    "PC108",
                    f"aliases add more than {self.limits.max_alias_nodes} nodes",
                    self.src(event),
                    fix="write the repeated parts out, or raise POLICYCTL_MAX_ALIAS_NODES",
                )
            self.count(size, event, alias=True)
            self.emit(value, self.src(event), size, counted=True)
        elif kind == "DocumentStartEvent":
            self.documents += 1
            if self.documents > 1:
                raise fail(
                    "PC110",
                    "a policy file holds one YAML document, this one holds more",
                    self.src(event),
                    fix="split the documents into separate files",
                )

    def check_tag(self, event: Any, default: str) -> None:
        tag = event.tag
        if tag is None:
            return
        text = str(getattr(tag, "value", tag))
        if text not in _PLAIN_TAGS and text != default:
            raise fail(
                "PC105",
                f"YAML tag {text} is not allowed",
                self.src(event),
                fix="remove the tag; policy values are plain strings, lists and mappings",
            )

    def count(self, size: int, event: Any, alias: bool = False) -> None:
        self.total += size
        if not alias:  # written out, not aliased (aliases have their own budget)
            self.written += size
        if self.written > self.limits.max_yaml_nodes:
            raise fail(
                "PC117",
                f"more than {self.limits.max_yaml_nodes} YAML nodes",
                self.src(event),
                fix="write a generated policy this large as JSON (read ~20x faster), or raise "
                "POLICYCTL_MAX_YAML_NODES",
            )
        if self.total > self.limits.max_nodes:
            raise fail(
                "PC108",
                f"more than {self.limits.max_nodes} nodes after alias expansion",
                self.src(event),
                fix="remove the aliases that multiply the document",
            )

    def require_value_slot(self, event: Any) -> None:
        if (
            self.stack
            and isinstance(self.stack[-1].container, LocMap)
            and self.stack[-1].key is None
        ):
            raise fail("PC110", "mapping keys must be plain scalars", self.src(event))

    def on_scalar(self, event: Any) -> None:
        src = self.src(event)
        if _SURROGATE.search(event.value):
            raise lone_surrogate(src)
        tag = event.tag
        tag_text = str(getattr(tag, "value", tag)) if tag is not None else None
        if tag_text is not None:
            self.check_tag(event, _STD + "str")
        top = self.stack[-1] if self.stack else None
        if top is not None and isinstance(top.container, LocMap) and top.key is None:
            # Keys are always text, as written: an unquoted group id `-100123` stays a string.
            if event.value == "<<" and event.style is None:
                raise fail(
                    "PC110",
                    "YAML merge keys (<<) are not supported",
                    src,
                    fix="use `extends:` to share settings between files",
                )
            if event.value in top.container:
                # every duplicate is reported at the end, not just the first: the later value
                # is read under a key no policy has, and the file is refused anyway
                first = top.container.key_src.get(event.value)
                where = f" (first at line {first.line})" if first else ""
                found = fail("PC104", f'duplicate key "{event.value}"{where}', src)
                self.duplicates.extend(found.diagnostics)
                top.key, top.key_src = f"\x00duplicate {len(self.duplicates)}", src
                self.dropped.append((top.container, top.key))
                self.count(1, event)
                return
            top.key, top.key_src = event.value, src
            self.count(1, event)
            return
        try:
            if tag_text is not None and tag_text != "!":
                value = _tagged_scalar(tag_text, event.value, src)
            elif event.style is None and tag_text is None:
                value = resolve_plain(event.value)
            else:
                value = event.value
        except ValueError:  # an integer beyond Python's conversion limit (4,300 digits)
            raise number_too_long(src) from None
        self.count(1, event)
        if event.anchor is not None:
            self.anchors[event.anchor] = (value, 1)
        self.emit(value, src, 1, counted=True)

    def emit(self, value: Any, src: Source | None, size: int, counted: bool) -> None:
        if not self.stack:
            self.root = value
            return
        frame = self.stack[-1]
        frame.size += size
        container = frame.container
        if isinstance(container, LocSeq):
            container.add(value, src)
        else:
            assert frame.key is not None
            container.put(frame.key, value, frame.key_src, src)
            frame.key = frame.key_src = None


def lone_surrogate(src: Source) -> PolicyError:
    return fail(
        "PC115",
        "the string holds a lone UTF-16 surrogate, which is not a character",
        src,
        fix="remove the \\ud800-\\udfff escape",
    )


def number_too_long(src: Source) -> PolicyError:
    return fail("PC114", "the integer has too many digits", src)


# -- TOML -------------------------------------------------------------------------------------

_TOML_POS = re.compile(r"at line (\d+), column (\d+)")


def _parse_toml(text: str, name: str, limits: Limits) -> LocMap:
    from .tomlpos import locate_toml

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_POS.search(str(exc))
        where = Source(name, int(found[1]), int(found[2])) if found else Source(name, 1, 1)
        message = _TOML_POS.sub("", str(exc)).strip(" ()")
        raise fail("PC103", f"TOML syntax error: {message}", where) from None
    except ValueError:  # tomllib's integer conversion beyond 4,300 digits
        raise fail("PC114", "an integer has too many digits", Source(name, 1, 1)) from None
    except RecursionError:
        raise fail("PC107", "nesting too deep to parse", Source(name, 1, 1)) from None
    return locate_toml(data, text, name, limits)


Reader = Callable[[FsPath], str]
