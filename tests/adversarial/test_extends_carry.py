"""`extends` shadowing (issue 11, item 4): a child cannot make a base deny stop applying by
adding a more specific scope. Property: whatever the child adds, every tool the base denies in
a context stays denied in that context."""

from __future__ import annotations

import itertools
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policyctl import RunContext, Sender, load_policy, resolve

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
}

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
}


def _contexts() -> list[RunContext]:
    out = []
    for agent, where, account, sender, model in itertools.product(
        ("coder", "main"),
        ("slack:group:C1", "slack:group:C1:topic:5", "slack:group:C9", "subagent:x", "main"),
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
        out.append({"exec", "write", "browser"} - set(run.allowed))
    return out


def _check(base: dict[str, Any], child: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        (tmp / "base.json").write_text(json.dumps(base), encoding="utf-8")
        (tmp / "child.json").write_text(
            json.dumps({"extends": "base.json", **child}), encoding="utf-8"
        )
        before, after = _denied(tmp / "base.json"), _denied(tmp / "child.json")
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
