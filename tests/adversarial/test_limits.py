"""Resource limits: hostile inputs end quickly, in bounded memory, with a diagnostic.

The time and memory bounds asserted here are hang and blow-up guards, set well above what the
machine needs (see bench/ for performance figures)."""

from __future__ import annotations

import json
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from policyctl import PolicyError, RunContext, load_policy, load_policy_text, resolve
from policyctl.catalog.inventory import Tool
from policyctl.names import Glob


def bounded(fn: Callable[[], Any], seconds: float, megabytes: float) -> Any:
    tracemalloc.start()
    # CPU time of this process: a hang guard must not depend on how busy the machine is
    start = time.process_time()
    try:
        result = fn()
    finally:
        elapsed = time.process_time() - start
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    assert elapsed < seconds, f"took {elapsed:.2f} s"
    assert peak < megabytes, f"peak {peak:.0f} MB"
    return result


def expect_code(fn: Callable[[], Any], code: str) -> None:
    with pytest.raises(PolicyError) as exc:
        fn()
    assert exc.value.diagnostics[0].code == code
    assert exc.value.diagnostics[0].source is not None


@pytest.mark.parametrize("width,depth", [(9, 9), (50, 5), (2, 40)])
def test_alias_bombs(width: int, depth: int) -> None:
    lines = ['a0: &a0 ["x"]']
    for level in range(1, depth + 1):
        refs = ",".join(f"*a{level - 1}" for _ in range(width))
        lines.append(f"a{level}: &a{level} [{refs}]")
    text = "\n".join(lines) + "\n"
    bounded(lambda: expect_code(lambda: load_policy_text(text, "bomb.yaml"), "PC108"), 5, 50)


@pytest.mark.parametrize(
    "name,text",
    [
        ("deep.yaml", "x: " + "[" * 5000 + "]" * 5000),
        ("deep.json", '{"x": ' + "[" * 5000 + "]" * 5000 + "}"),
        (
            "deep2.yaml",
            "".join(f"{' ' * (2 * i)}k{i}:\n" for i in range(200)) + " " * 400 + "v: 1\n",
        ),
    ],
)
def test_deep_nesting(name: str, text: str) -> None:
    bounded(lambda: expect_code(lambda: load_policy_text(text, name), "PC107"), 5, 50)


def test_deep_nesting_toml() -> None:
    text = "x = " + "[" * 5000 + "]" * 5000 + "\n"
    with pytest.raises(PolicyError) as exc:
        bounded(lambda: load_policy_text(text, "deep.toml"), 5, 100)
    assert exc.value.diagnostics[0].code in ("PC107", "PC103")


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_hundred_thousand_entries_in_one_list(fmt: str) -> None:
    entries = [f"tool_{i}" for i in range(100_000)]
    doc = {"tools": {"deny": entries}}
    if fmt == "yaml":
        # beyond the YAML node limit (PC117): refused after 50,000 nodes, not read to the end
        text = "tools:\n  deny:\n" + "".join(f"    - {e}\n" for e in entries)
        bounded(lambda: expect_code(lambda: load_policy_text(text, "big.yaml"), "PC117"), 60, 400)
        return
    policy = bounded(lambda: load_policy_text(json.dumps(doc), "big.json"), 60, 400)
    res = bounded(
        lambda: resolve(
            policy, RunContext(), [Tool("exec"), Tool("tool_99999")], require_tools=False
        ),
        2,
        100,
    )
    assert res.allowed == ("exec",)


def test_huge_lists_of_scopes() -> None:
    doc = {"tools": {"toolsBySender": {f"id:{i}": {"deny": ["exec"]} for i in range(20_000)}}}
    policy = bounded(lambda: load_policy_text(json.dumps(doc), "senders.json"), 60, 400)
    res = bounded(
        lambda: resolve(policy, RunContext(sender=__import__("policyctl").Sender(id="19999"))),
        1,
        50,
    )
    assert "exec" not in res.allowed


def test_pathological_globs_against_long_names() -> None:
    pattern = "*a" * 40 + "*b"
    name = "a" * 100_000
    assert bounded(lambda: Glob.compile(pattern).matches(name), 1, 10) is False
    deny = ["*a" * n + "*b" for n in range(1, 60)]
    policy = load_policy_text(json.dumps({"tools": {"deny": deny}}), "globs.json")
    inventory = [Tool.mcp("a" * 10_000 + str(i)) for i in range(200)] + [Tool("exec")]
    res = bounded(lambda: resolve(policy, RunContext(), inventory, require_tools=False), 10, 200)
    assert res.allowed[-1] == "exec" and len(res.allowed) == 201


def test_oversized_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    with path.open("wb") as fh:
        fh.truncate(60 * 1024 * 1024)  # sparse: 60 MiB of zeros
    bounded(lambda: expect_code(lambda: load_policy(path), "PC106"), 2, 10)


# -- what one policy may hold (PC117) -------------------------------------------------------


def _over(text: str, name: str = "p.json", **limits: int) -> list[tuple[str, int, int]]:
    from policyctl.settings import Limits

    with pytest.raises(PolicyError) as exc:
        load_policy_text(text, name, limits=Limits(**limits))  # type: ignore[arg-type]
    return [
        (d.message, d.source.line, d.source.column)
        for d in exc.value.diagnostics
        if d.code == "PC117" and d.source is not None
    ]


def test_agents_sender_keys_and_entries_beyond_their_limits_are_refused_where_they_start() -> None:
    agents = "agents:\n  entries:\n    a1: {}\n    a2: {}\n    a3: {}\n"
    assert _over(agents, "p.yaml", max_agents=2) == [("more than 2 agents in one policy", 5, 5)]
    legacy = "agents:\n  list:\n    - {id: a1}\n    - {id: a2}\n"
    assert _over(legacy, "p.yaml", max_agents=1) == [("more than 1 agents in one policy", 4, 7)]
    senders = (
        "tools:\n  toolsBySender:\n    id:1: {}\n"
        "agents:\n  entries:\n    a1: {tools: {toolsBySender: {id:2: {}, id:3: {}}}}\n"
    )
    found = _over(senders, "p.yaml", max_sender_keys=2)
    assert [m for m, _, _ in found] == ["more than 2 sender keys in one policy"]
    entries = "tools:\n  allow: [read, exec]\n  deny: [write, edit]\n"
    found = _over(entries, "p.yaml", max_entries=3)
    assert [m for m, _, _ in found] == ["more than 3 tool-list entries in one policy"]
    load_policy_text(entries, "p.yaml")  # within the default limits


def test_call_rule_specifiers_beyond_their_limit_are_refused_where_they_start() -> None:
    # each specifier compiles a matcher (a path rule a regex): bounded apart from plain names
    rules = 'tools:\n  allow: [read, "exec(git *)"]\n  deny: ["read(.env)", "exec(rm *)"]\n'
    found = _over(rules, "p.yaml", max_call_rules=2)
    assert found == [("more than 2 call-rule specifiers in one policy", 2, 17)], found
    assert not _over_or_none(rules, max_call_rules=3)
    plain = "tools:\n  allow: [read, exec]\n  deny: [write, edit]\n"
    assert not _over_or_none(plain, max_call_rules=1)  # plain names are not specifiers


def _over_or_none(text: str, **limits: int) -> list[str]:
    from policyctl.settings import Limits

    try:
        load_policy_text(text, "p.yaml", limits=Limits(**limits))  # type: ignore[arg-type]
    except PolicyError as exc:
        return [d.message for d in exc.diagnostics if d.code == "PC117"]
    return []


def test_the_limits_hold_for_the_merged_policy(tmp_path: Path) -> None:
    from policyctl.settings import Limits

    (tmp_path / "base.yaml").write_text("agents: {entries: {a1: {}, a2: {}}}\n", encoding="utf-8")
    child = tmp_path / "child.yaml"
    child.write_text("extends: base.yaml\nagents: {entries: {a3: {}}}\n", encoding="utf-8")
    assert load_policy(child, limits=Limits(max_agents=3)) is not None
    expect_code(lambda: load_policy(child, limits=Limits(max_agents=2)), "PC117")


def test_a_yaml_file_beyond_its_node_limit_stops_early() -> None:
    from policyctl.settings import Limits

    text = "tools:\n  deny:\n" + "".join(f"    - t{i}\n" for i in range(100))
    expect_code(lambda: load_policy_text(text, limits=Limits(max_yaml_nodes=50)), "PC117")
    # the same policy as JSON is bounded by max_nodes only
    as_json = json.dumps({"tools": {"deny": [f"t{i}" for i in range(100)]}})
    load_policy_text(as_json, "p.json", limits=Limits(max_yaml_nodes=50))


def test_the_size_limits_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from policyctl.settings import default_limits

    monkeypatch.setenv("POLICYCTL_MAX_AGENTS", "1")
    default_limits.cache_clear()
    try:
        expect_code(lambda: load_policy_text("agents: {entries: {a: {}, b: {}}}\n"), "PC117")
    finally:
        monkeypatch.delenv("POLICYCTL_MAX_AGENTS")
        default_limits.cache_clear()


def test_unknown_glob_warnings_are_the_same_with_and_without_the_glob_index(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The warnings ask a list's glob index once per tool instead of scanning every tool per
    glob (200,000 deny globs took 35 s): the answer must not change."""
    import policyctl.compile.entries as entries_module

    globs = [f"nothing{i}_*" for i in range(20)] + ["exe*", "github__*", "canv*", "*_status"]
    text = json.dumps({"tools": {"deny": globs}})
    tools = [Tool("exec"), Tool.mcp("github__create_pr"), Tool("read")]

    def warned() -> list[str]:
        policy = load_policy_text(text, "globs.json")
        res = resolve(policy, RunContext(), tools, require_tools=False)
        return sorted(w.message for w in res.warnings)

    indexed = warned()
    monkeypatch.setattr(entries_module, "GLOB_INDEX_MIN", 1000)
    assert warned() == indexed
    assert "nothing0_*" in indexed[0] and "exe*" not in indexed[0]
