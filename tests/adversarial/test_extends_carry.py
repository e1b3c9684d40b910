"""`extends` shadowing (issue 11, item 4): a child cannot make a base deny stop applying by
adding a more specific scope, nor by loosening a scalar that gates a deny layer (sandbox mode,
the main session, maxSpawnDepth, the catalog: refused, PC359-PC361). Property: whatever the
child adds, it is refused with a located error, or every tool the base denies in a context
stays denied in that context."""

from __future__ import annotations

import itertools
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policyctl import PolicyError, RunContext, Sender, load_policy, resolve

# Base policies: each denies `exec` (and `write`) somewhere a more specific scope could hide.
BASES: dict[str, dict[str, Any]] = {
    "provider": {"tools": {"byProvider": {"openai": {"deny": ["exec"]}}}},
    "agent provider": {
        "agents": {"entries": {"coder": {"tools": {"byProvider": {"OpenAI": {"deny": ["exec"]}}}}}}
    },
    "defaults": {"agents": {"defaults": {"tools": {"deny": ["exec"]}}}},
    "defaults provider": {
        "agents": {"defaults": {"tools": {"byProvider": {"openai": {"deny": ["exec"]}}}}}
    },
    "any sender": {"tools": {"toolsBySender": {"*": {"deny": ["exec"]}}}},
    "username": {"tools": {"toolsBySender": {"username:ada": {"deny": ["exec"]}}}},
    "wildcard group": {"channels": {"slack": {"groups": {"*": {"tools": {"deny": ["exec"]}}}}}},
    "group": {"channels": {"slack": {"groups": {"C1": {"tools": {"deny": ["exec"]}}}}}},
    "group sender": {
        "channels": {"slack": {"groups": {"C1": {"toolsBySender": {"*": {"deny": ["exec"]}}}}}}
    },
    "sandbox": {
        "agents": {"defaults": {"sandbox": {"mode": "all"}}},
        "tools": {"sandbox": {"tools": {"deny": ["exec", "browser"]}}},
    },
    "subagents": {"tools": {"subagents": {"tools": {"deny": ["exec"]}}}},
    "non-main sandbox": {
        "agents": {"defaults": {"sandbox": {"mode": "non-main"}}},
        "tools": {"sandbox": {"tools": {"deny": ["exec"], "alsoAllow": ["exec"]}}},
    },
    "coder sandboxed": {
        "agents": {"entries": {"coder": {"sandbox": {"mode": "all"}}}},
        "tools": {"sandbox": {"tools": {"deny": ["write"]}}},
    },
    "runtime group": {"tools": {"deny": ["group:runtime"]}},
    "leaf": {"agents": {"defaults": {"subagents": {"maxSpawnDepth": 1}}}},
}

#: an operator catalog that moves `exec` out of `group:runtime`
OURS_TOML = (
    'name = "ours"\nextends = "openclaw"\n'
    'tools = [{ id = "exec", section = "misc", profiles = ["coding"] }]\n'
)

# What an extending file adds: each one a more specific scope (or a respelling of one).
CHILDREN: dict[str, dict[str, Any]] = {
    "model key": {"tools": {"byProvider": {"openai/gpt-5.4": {"allow": ["*"]}}}},
    "agent model key": {
        "agents": {"entries": {"coder": {"tools": {"byProvider": {"openai/gpt-5.4": {}}}}}}
    },
    "agent without tools": {"agents": {"entries": {"coder": {"name": "Coder"}}}},
    "agent with tools": {"agents": {"entries": {"coder": {"tools": {"allow": ["*"]}}}}},
    "legacy agent": {"agents": {"list": [{"id": "coder"}]}},
    "sender id": {"tools": {"toolsBySender": {"id:42": {}}}},
    "agent sender": {"agents": {"entries": {"coder": {"tools": {"toolsBySender": {"*": {}}}}}}},
    "group": {"channels": {"slack": {"groups": {"C1": {"tools": {"allow": ["*"]}}}}}},
    "group sender": {"channels": {"slack": {"groups": {"C1": {"toolsBySender": {"*": {}}}}}}},
    "account groups": {"channels": {"slack": {"accounts": {"acme": {"groups": {"C9": {}}}}}}},
    "agent sandbox": {
        "agents": {"entries": {"coder": {"tools": {"sandbox": {"tools": {"deny": []}}}}}}
    },
    "agent subagents": {
        "agents": {"entries": {"coder": {"tools": {"subagents": {"tools": {"allow": ["*"]}}}}}}
    },
    "respelled channel": {"channels": {"Slack": {"groups": {"C1": {"tools": {}}}}}},
    "topic group": {"channels": {"slack": {"groups": {"C1:topic:5": {"tools": {}}}}}},
    # scalars that gate a deny layer or decide what an entry expands to (README "Security")
    "sandbox off": {"agents": {"defaults": {"sandbox": {"mode": "off"}}}},
    "coder sandbox off": {"agents": {"entries": {"coder": {"sandbox": {"mode": "off"}}}}},
    "main key": {"session": {"mainKey": "work"}},
    "global session": {"session": {"scope": "global"}},
    "deeper spawning": {"agents": {"defaults": {"subagents": {"maxSpawnDepth": 3}}}},
    "operator catalog": {"catalog": "ours.toml"},
}

#: the codes a child that loosens one of those scalars is refused with
FLOOR_CODES = {"PC359", "PC360", "PC361"}


def _contexts() -> list[RunContext]:
    out = []
    for agent, where, account, sender, model in itertools.product(
        ("coder", "main"),
        (
            *("slack:group:C1", "slack:group:C1:topic:5", "slack:group:C9", "subagent:x"),
            *("main", "work", "global"),
        ),
        (None, "acme"),
        (Sender(id="42", username="ada"), Sender(id="7")),
        ("gpt-5.4", None),
    ):
        out.append(
            RunContext(
                agent=agent,
                provider="openai",
                model=model,
                session_key=f"agent:{agent}:{where}",
                account=account,
                sender=sender,
            )
        )
    return out


CONTEXTS = _contexts()


def _deep_merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k, v in b.items():
        out[k] = (
            _deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
        )
    return out


def _denied(path: Path) -> list[set[str]]:
    policy = load_policy(path)
    out = []
    for ctx in CONTEXTS:
        run = resolve(policy, ctx, require_tools=False)
        out.append({"exec", "write", "browser", "sessions_spawn"} - set(run.allowed))
    return out


def _check(base: dict[str, Any], child: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        (tmp / "base.json").write_text(json.dumps(base), encoding="utf-8")
        (tmp / "child.json").write_text(
            json.dumps({"extends": "base.json", **child}), encoding="utf-8"
        )
        (tmp / "ours.toml").write_text(OURS_TOML, encoding="utf-8")
        before = _denied(tmp / "base.json")
        try:
            after = _denied(tmp / "child.json")
        except PolicyError as exc:  # refused: only for a loosened floor, and located
            assert {d.code for d in exc.diagnostics} <= FLOOR_CODES, exc.diagnostics
            assert all(d.source and d.source.file.endswith("child.json") for d in exc.diagnostics)
            return
    for ctx, was, now in zip(CONTEXTS, before, after, strict=True):
        assert was <= now, f"{sorted(was - now)} came back for {ctx}"


@pytest.mark.parametrize("child", sorted(CHILDREN))
@pytest.mark.parametrize("base", sorted(BASES))
def test_a_child_scope_never_hides_a_base_deny(base: str, child: str) -> None:
    _check(BASES[base], CHILDREN[child])


@settings(max_examples=25, deadline=None)
@given(
    bases=st.sets(st.sampled_from(sorted(BASES)), min_size=1, max_size=3),
    children=st.sets(st.sampled_from(sorted(CHILDREN)), min_size=1, max_size=4),
)
def test_a_child_can_never_drop_a_base_deny_in_effect(bases: set[str], children: set[str]) -> None:
    base: dict[str, Any] = {}
    for name in sorted(bases):
        base = _deep_merge(base, BASES[name])
    child: dict[str, Any] = {}
    for name in sorted(children):
        if name == "legacy agent" and "agents" in child:
            continue  # agents.list next to agents.entries of the same id is PC306
        respelled = "respelled channel" in children
        if "channels" in CHILDREN[name] and respelled and name != "respelled channel":
            continue  # Slack next to slack in one file is PC311
        child = _deep_merge(child, CHILDREN[name])
    _check(base, child)


def test_the_carried_deny_points_at_the_base_file(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text(
        "tools:\n  byProvider:\n    openai: {deny: [exec]}\n", encoding="utf-8"
    )
    (tmp_path / "p.yaml").write_text(
        "extends: base.yaml\ntools:\n  byProvider:\n    openai/gpt-5.4: {}\n", encoding="utf-8"
    )
    run = resolve(load_policy(tmp_path / "p.yaml"), CONTEXTS[0], require_tools=False)
    removal = run.removal("exec")
    assert removal is not None and removal.source is not None
    assert Path(removal.source.file).name == "base.yaml"


# -- the floors themselves: what is refused, and what stays legal ---------------------------

SANDBOXED = {"agents": {"defaults": {"sandbox": {"mode": "non-main"}}}}

REFUSED: list[tuple[dict[str, Any], dict[str, Any], str]] = [
    (SANDBOXED, CHILDREN["sandbox off"], "PC359"),
    (BASES["sandbox"], {"agents": {"defaults": {"sandbox": {"mode": "non-main"}}}}, "PC359"),
    # an agent entry the child adds has the base's default mode as its floor
    (SANDBOXED, {"agents": {"entries": {"x": {"sandbox": {"mode": "off"}}}}}, "PC359"),
    (
        BASES["coder sandboxed"],
        {"agents": {"entries": {"coder": {"sandbox": {"mode": "non-main"}}}}},
        "PC359",
    ),
    (SANDBOXED, CHILDREN["main key"], "PC359"),
    (SANDBOXED, CHILDREN["global session"], "PC359"),
    ({}, CHILDREN["deeper spawning"], "PC360"),
    (BASES["leaf"], {"agents": {"defaults": {"subagents": {"maxSpawnDepth": 2}}}}, "PC360"),
    (BASES["runtime group"], CHILDREN["operator catalog"], "PC361"),
    ({"catalog": "openclaw"}, {"catalog": "openclaw-2026.4"}, "PC361"),
]

ALLOWED: list[tuple[dict[str, Any], dict[str, Any]]] = [
    (SANDBOXED, {"agents": {"defaults": {"sandbox": {"mode": "all"}}}}),
    (SANDBOXED, {"agents": {"entries": {"x": {"sandbox": {"mode": "non-main"}}}}}),
    ({}, CHILDREN["sandbox off"]),  # off is the default: nothing loosened
    # the main session may move where no agent stays non-main
    ({}, {**CHILDREN["main key"], **SANDBOXED}),
    (SANDBOXED, {**CHILDREN["main key"], "agents": {"defaults": {"sandbox": {"mode": "all"}}}}),
    ({"agents": {"defaults": {"subagents": {"maxSpawnDepth": 3}}}}, BASES["leaf"]),
    ({"catalog": "openclaw"}, {"catalog": "openclaw"}),
    ({}, {"catalog": "openclaw"}),  # the default catalog, named
    ({"catalog": "ours.toml"}, {"catalog": "./ours.toml"}),  # the same file
]


def _load_child(tmp: Path, base: dict[str, Any], child: dict[str, Any]) -> None:
    (tmp / "ours.toml").write_text(OURS_TOML, encoding="utf-8")
    (tmp / "base.json").write_text(json.dumps(base), encoding="utf-8")
    (tmp / "child.yaml").write_text(
        json.dumps({"extends": "base.json", **child}, indent=1), encoding="utf-8"
    )
    load_policy(tmp / "child.yaml")


@pytest.mark.parametrize(("base", "child", "code"), REFUSED)
def test_a_loosened_floor_is_a_located_error(
    tmp_path: Path, base: dict[str, Any], child: dict[str, Any], code: str
) -> None:
    with pytest.raises(PolicyError) as caught:
        _load_child(tmp_path, base, child)
    (found,) = caught.value.diagnostics
    assert found.code == code and found.fix
    assert found.source is not None and found.source.file.endswith("child.yaml")
    assert found.source.line > 1  # the child's own value, not the extends line


@pytest.mark.parametrize(("base", "child"), ALLOWED)
def test_a_tightened_or_restated_floor_loads(
    tmp_path: Path, base: dict[str, Any], child: dict[str, Any]
) -> None:
    _load_child(tmp_path, base, child)


def test_a_grandchild_cannot_loosen_what_its_parent_tightened(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(SANDBOXED), encoding="utf-8")
    tightened = {"extends": "a.json", "agents": {"defaults": {"sandbox": {"mode": "all"}}}}
    (tmp_path / "b.json").write_text(json.dumps(tightened), encoding="utf-8")
    loosened = {"extends": "b.json", **SANDBOXED}
    (tmp_path / "c.json").write_text(json.dumps(loosened), encoding="utf-8")
    with pytest.raises(PolicyError, match="PC359"):
        load_policy(tmp_path / "c.json")


# -- finding 16: a group, channel, DM or subagent session is never the main one -----------------


@pytest.mark.parametrize(
    "key",
    [
        "slack:group:C1",
        "agent:support:slack:group:C1",
        "slack:acme:group:C1",
        "discord:channel:123",
        "slack:dm:ada",
        "telegram:direct:42",
        "subagent:x",
    ],
)
def test_a_main_key_that_names_its_own_session_is_refused(tmp_path: Path, key: str) -> None:
    (tmp_path / "p.yaml").write_text(
        f"catalog: openclaw\nsession:\n  mainKey: {json.dumps(key)}\n", encoding="utf-8"
    )
    with pytest.raises(PolicyError) as caught:
        load_policy(tmp_path / "p.yaml")
    (found,) = caught.value.diagnostics
    assert found.code == "PC362" and found.source is not None
    assert (found.source.line, found.source.column) == (3, 12)


def test_a_plain_main_key_loads(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text("session:\n  mainKey: work\n", encoding="utf-8")
    assert load_policy(tmp_path / "p.yaml").main_key == "work"


def test_a_group_session_is_sandboxed_under_non_main_whatever_the_main_key(
    tmp_path: Path,
) -> None:
    """Defence in depth below PC362: a compiled policy whose main key is a group key (one built
    by hand, or by an older policyctl) still sandboxes the group session."""
    import dataclasses

    (tmp_path / "p.json").write_text(
        json.dumps({**SANDBOXED, "tools": {"sandbox": {"tools": {"deny": ["exec"]}}}}),
        encoding="utf-8",
    )
    policy = dataclasses.replace(load_policy(tmp_path / "p.json"), main_key="slack:group:c1")
    for key in ("agent:support:slack:group:C1", "slack:group:C1", "agent:a:subagent:x"):
        run = resolve(policy, RunContext(provider="openai", session_key=key), require_tools=False)
        assert "exec" not in run.allowed, key
        assert run.context.sandboxed, key
