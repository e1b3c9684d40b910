"""Loading: formats, locations, extends merging, and hostile input (issue: core engine, 1)."""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import pytest

from policyctl import PolicyError, load_policy
from policyctl.document.extends import load_document
from policyctl.settings import Limits


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def only_error(exc: pytest.ExceptionInfo[PolicyError]) -> tuple[str, int, int]:
    d = exc.value.diagnostics[0]
    assert d.source is not None, d
    return d.code, d.source.line, d.source.column


# -- formats and locations -------------------------------------------------------------------


def test_yaml_locations_for_keys_and_items(tmp_path: Path) -> None:
    path = write(tmp_path, "p.yaml", 'tools:\n  deny:\n    - exec\n    - "process"\n')
    doc = load_document(path)
    assert doc.data == {"tools": {"deny": ["exec", "process"]}}
    loc = doc.locations
    assert (loc.key(("tools", "deny")).line, loc.key(("tools", "deny")).column) == (2, 3)
    item = loc.value(("tools", "deny", 1))
    assert (item.line, item.column) == (4, 7)


def test_toml_locations_for_keys_and_items(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "p.toml",
        '[tools]\nprofile = "coding"\ndeny = ["exec",\n  "process"]\n'
        '[agents.entries.coder.tools]\nallow = ["read"]\n',
    )
    doc = load_document(path)
    loc = doc.locations
    assert (loc.value(("tools", "deny", 1)).line, loc.value(("tools", "deny", 1)).column) == (4, 3)
    assert loc.key(("agents", "entries", "coder", "tools", "allow")).line == 6
    assert (loc.value(("tools", "profile")).line, loc.value(("tools", "profile")).column) == (2, 11)


def test_json_is_read_with_locations(tmp_path: Path) -> None:
    path = write(
        tmp_path, "p.json", '{\n  "tools": {\n    "deny": ["exec", "web_search"]\n  }\n}\n'
    )
    doc = load_document(path)
    assert doc.data == {"tools": {"deny": ["exec", "web_search"]}}
    assert doc.locations.value(("tools", "deny", 1)).line == 3


def test_unquoted_numeric_group_ids_stay_text(tmp_path: Path) -> None:
    path = write(
        tmp_path, "p.yaml", "channels:\n  telegram:\n    groups:\n      -1001234567890: {}\n"
    )
    doc = load_document(path)
    assert list(doc.data["channels"]["telegram"]["groups"]) == ["-1001234567890"]


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = write(tmp_path, "p.yaml", b"\xef\xbb\xbftools:\n  deny: [exec]\n")
    assert load_document(path).data == {"tools": {"deny": ["exec"]}}


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("p.yaml", ""),
        ("p.yaml", "# only a comment\n"),
        ("p.toml", "# nothing\n"),
        ("p.json", "  \n"),
    ],
)
def test_empty_file_is_refused(tmp_path: Path, name: str, text: str) -> None:
    # an empty policy would allow everything: fail closed
    with pytest.raises(PolicyError) as exc:
        load_policy(write(tmp_path, name, text))
    assert only_error(exc) == ("PC111", 1, 1)
    assert load_policy(write(tmp_path, "explicit.yaml", "{}\n")).catalog.name == "openclaw"


# -- extends ---------------------------------------------------------------------------------


def test_extends_deep_merges_and_unions_deny(tmp_path: Path) -> None:
    write(
        tmp_path,
        "base.yaml",
        "tools:\n  profile: coding\n  deny: [exec, browser]\n  allow: [read]\n",
    )
    child = write(
        tmp_path, "child.yaml", "extends: base.yaml\ntools:\n  deny: [process]\n  allow: [write]\n"
    )
    doc = load_document(child)
    assert doc.data["tools"]["profile"] == "coding"  # mappings deep-merge
    assert doc.data["tools"]["allow"] == ["write"]  # lists are replaced
    assert doc.data["tools"]["deny"] == ["exec", "browser", "process"]  # deny is unioned
    base_item = doc.locations.value(("tools", "deny", 0))
    child_item = doc.locations.value(("tools", "deny", 2))
    assert base_item.file.endswith("base.yaml") and base_item.line == 3
    assert child_item.file.endswith("child.yaml") and child_item.line == 3


def test_extends_cannot_erase_a_base_value_with_null(tmp_path: Path) -> None:
    write(tmp_path, "base.yaml", "tools:\n  deny: [exec]\n")
    child = write(tmp_path, "child.yaml", "extends: base.yaml\ntools:\n  deny: null\n")
    with pytest.raises(PolicyError) as exc:
        load_document(child)
    code, line, _ = only_error(exc)
    assert (code, line) == ("PC203", 3)


def test_extends_list_of_files_applies_in_order(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", "tools:\n  profile: minimal\n  deny: [a1]\n")
    write(tmp_path, "b.yaml", "tools:\n  profile: coding\n  deny: [b1]\n")
    child = write(tmp_path, "c.yaml", "extends: [a.yaml, b.yaml]\n")
    doc = load_document(child)
    assert doc.data["tools"] == {"profile": "coding", "deny": ["a1", "b1"]}


def test_extends_cycle_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", "extends: b.yaml\n")
    write(tmp_path, "b.yaml", "extends: a.yaml\n")
    with pytest.raises(PolicyError) as exc:
        load_document(tmp_path / "a.yaml")
    code, line, _ = only_error(exc)
    assert code == "PC109" and line == 1
    assert "a.yaml -> b.yaml -> a.yaml" in exc.value.diagnostics[0].message


def test_extends_missing_file(tmp_path: Path) -> None:
    child = write(tmp_path, "c.yaml", "extends: nope.yaml\n")
    with pytest.raises(PolicyError) as exc:
        load_document(child)
    assert only_error(exc)[0] == "PC101"


def test_extending_file_cannot_drop_base_deny_at_resolve(tmp_path: Path) -> None:
    from policyctl import RunContext, resolve

    write(tmp_path, "base.yaml", "tools:\n  deny: [exec]\n")
    child = write(tmp_path, "c.yaml", "extends: base.yaml\ntools:\n  deny: []\n  allow: ['*']\n")
    res = resolve(load_policy(child), RunContext())
    assert "exec" not in res.allowed
    assert res.removal("exec").source.file.endswith("base.yaml")


# -- hostile input: each ends in a located diagnostic, quickly, in bounded memory -------------


def _bounded(fn) -> tuple[pytest.ExceptionInfo[PolicyError], float, int]:  # type: ignore[no-untyped-def]
    tracemalloc.start()
    # CPU time of this process: a hang guard must not depend on how busy the machine is
    start = time.process_time()
    with pytest.raises(PolicyError) as exc:
        fn()
    elapsed = time.process_time() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return exc, elapsed, peak


ALIAS_BOMB = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def test_alias_bomb(tmp_path: Path) -> None:
    path = write(tmp_path, "bomb.yaml", ALIAS_BOMB)
    exc, elapsed, peak = _bounded(lambda: load_document(path))
    code, line, _ = only_error(exc)
    assert code == "PC108" and line >= 2
    # Hang and memory guards, not performance targets (those live in bench/).
    assert elapsed < 5 and peak < 50 * 1024 * 1024


def test_deep_nesting(tmp_path: Path) -> None:
    path = write(tmp_path, "deep.yaml", "a: " + "[" * 10_000 + "]" * 10_000 + "\n")
    exc, elapsed, peak = _bounded(lambda: load_document(path))
    assert only_error(exc)[0] == "PC107"
    assert elapsed < 5 and peak < 50 * 1024 * 1024


def test_deep_nesting_toml(tmp_path: Path) -> None:
    path = write(tmp_path, "deep.toml", "a = " + "[" * 10_000 + "]" * 10_000 + "\n")
    exc, elapsed, _ = _bounded(lambda: load_document(path))
    assert only_error(exc)[0] in ("PC107", "PC103")
    assert elapsed < 5


def test_large_file_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    with path.open("wb") as fh:
        fh.write(b"tools:\n  deny:\n")
        fh.write(b"    - exec\n" * (50 * 1024 * 1024 // 11))
    exc, elapsed, peak = _bounded(lambda: load_document(path))
    code, line, col = only_error(exc)
    assert (code, line, col) == ("PC106", 1, 1)
    assert elapsed < 5 and peak < 10 * 1024 * 1024


def test_invalid_utf8(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", b"tools:\n  deny: [ex\xffec]\n")
    exc, _, _ = _bounded(lambda: load_document(path))
    assert only_error(exc) == ("PC102", 2, 12)


def test_utf16_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", "tools: {}\n".encode("utf-16"))
    exc, _, _ = _bounded(lambda: load_document(path))
    assert only_error(exc)[0] == "PC102"


def test_duplicate_keys(tmp_path: Path) -> None:
    path = write(tmp_path, "dup.yaml", "tools:\n  deny: [exec]\n  deny: []\n")
    exc, _, _ = _bounded(lambda: load_document(path))
    assert only_error(exc) == ("PC104", 3, 3)
    assert "first at line 2" in exc.value.diagnostics[0].message


@pytest.mark.parametrize(
    "tag", ["!!python/object/apply:os.system", "!!python/name:os.system", "!custom", "!!binary"]
)
def test_object_constructing_tags_are_refused(tmp_path: Path, tag: str) -> None:
    path = write(tmp_path, "tag.yaml", f"tools:\n  deny: [{tag} ['echo pwned']]\n")
    exc, _, _ = _bounded(lambda: load_document(path))
    code, line, _ = only_error(exc)
    assert (code, line) == ("PC105", 2)


def test_standard_tags_are_accepted(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "tag.yaml",
        "tools:\n  deny: [!!str exec]\nagents:\n  defaults:\n"
        "    subagents: {maxSpawnDepth: !!int '2'}\n",
    )
    doc = load_document(path)
    assert doc.data["tools"]["deny"] == ["exec"]
    assert doc.data["agents"]["defaults"]["subagents"]["maxSpawnDepth"] == 2


def test_toml_syntax_error(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.toml", '[tools]\ndeny = ["exec"\nprofile = 1\n')
    exc, _, _ = _bounded(lambda: load_document(path))
    code, line, _ = only_error(exc)
    assert code == "PC103" and line >= 2


def test_yaml_syntax_error(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", "tools:\n  deny: [exec\n  allow: x\n")
    exc, _, _ = _bounded(lambda: load_document(path))
    assert only_error(exc)[0] == "PC103"


def test_multiple_documents_and_merge_keys(tmp_path: Path) -> None:
    multi = write(tmp_path, "multi.yaml", "tools: {}\n---\ntools: {}\n")
    with pytest.raises(PolicyError) as exc:
        load_document(multi)
    assert only_error(exc)[0] == "PC110"
    merge = write(tmp_path, "merge.yaml", "base: &b {deny: [exec]}\ntools:\n  <<: *b\n")
    with pytest.raises(PolicyError) as exc:
        load_document(merge)
    assert only_error(exc)[:2] == ("PC110", 3)


def test_limits_are_configurable_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from policyctl.settings import default_limits

    default_limits.cache_clear()
    monkeypatch.setenv("POLICYCTL_MAX_DEPTH", "3")
    try:
        path = write(tmp_path, "p.yaml", "a: {b: {c: {d: 1}}}\n")
        with pytest.raises(PolicyError) as exc:
            load_document(path)
        assert only_error(exc)[0] == "PC107"
        monkeypatch.setenv("POLICYCTL_MAX_DEPTH", "lots")
        default_limits.cache_clear()
        with pytest.raises(PolicyError) as exc:
            load_document(path)
        assert "POLICYCTL_MAX_DEPTH" in str(exc.value)
    finally:
        default_limits.cache_clear()


def test_explicit_limits(tmp_path: Path) -> None:
    path = write(tmp_path, "p.yaml", "tools:\n  deny: [a, b, c, d, e]\n")
    with pytest.raises(PolicyError) as exc:
        load_document(path, Limits(max_nodes=4))
    assert only_error(exc)[0] == "PC108"
