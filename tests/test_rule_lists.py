"""A deny or ask rule is named by the list it is written in, everywhere an operator reads it:
resolve (text and JSON), explain's trail and call decision, simulate, policy test failures,
the runtime's refusal and the approver's reason (issue 20, part 7, item 2).

Each row is a policy, a context, a tool (and a call), and the list that must be named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from policyctl import RunContext, Sender, load_policy_text, resolve
from policyctl.cli.main import main
from policyctl.explain.call import explain_call
from policyctl.explain.refusal import refusal_reason
from policyctl.runtime.approvals import asking_rules

POLICY = """
tools:
  profile: coding
  deny: [screen, "exec(rm *)"]
  ask: ["exec(git push *)", write]
  toolsBySender:
    "id:troll": {deny: ["*"]}
    "id:7": {deny: [web_fetch]}
agents:
  entries:
    coder:
      tools:
        deny: [memory_get, "exec(sudo *)"]
        ask: ["edit(./.github/**)"]
    docs:
      tools:
        allow: [read, "web_fetch(domain:docs.python.org)"]
        callDefault: ask
channels:
  slack:
    groups:
      C1: {tools: {deny: [web_search]}}
"""

# (context, tool, the list that removes it)
REMOVALS = [
    (RunContext(), "screen", "tools.deny"),
    (RunContext(agent="coder"), "memory_get", "agents.entries.coder.tools.deny"),
    (RunContext(sender=Sender(id="troll")), "read", 'tools.toolsBySender["id:troll"].deny'),
    (RunContext(sender=Sender(id="7")), "web_fetch", 'tools.toolsBySender["id:7"].deny'),
    (RunContext(channel="slack", group="C1"), "web_search", "channels.slack.groups.C1.tools.deny"),
]

# (context, tool, call, effect, the list of the rule that decided)
CALLS = [
    (RunContext(), "exec", {"command": "rm -rf x"}, "deny", "tools.deny"),
    (RunContext(), "exec", {"command": "git push origin"}, "ask", "tools.ask"),
    (RunContext(), "write", {"path": "/tmp/x", "content": ""}, "ask", "tools.ask"),
    (
        RunContext(agent="coder"),
        "exec",
        {"command": "sudo ls"},
        "deny",
        "agents.entries.coder.tools.deny",
    ),
    (
        RunContext(agent="coder", workspace="/w"),
        "edit",
        {"path": ".github/ci.yml", "old_string": "a", "new_string": "b"},
        "ask",
        "agents.entries.coder.tools.ask",
    ),
    (
        RunContext(agent="docs"),
        "web_fetch",
        {"url": "https://evil.test/"},
        "ask",
        "agents.entries.docs.tools.callDefault",
    ),
    (
        RunContext(agent="docs"),
        "web_fetch",
        {"url": "https://docs.python.org/3/"},
        "allow",
        "agents.entries.docs.tools.allow",
    ),
]


@pytest.fixture(scope="module")
def policy_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("lists") / "policy.yaml"
    path.write_text(POLICY)
    return path


def _flags(ctx: RunContext) -> list[str]:
    out = []
    if ctx.agent:
        out += ["--agent", ctx.agent]
    if ctx.sender is not None and ctx.sender.id:
        out += ["--sender-id", ctx.sender.id]
    if ctx.channel:
        out += ["--channel", ctx.channel, "--group", ctx.group or ""]
    return out


@pytest.mark.parametrize(("ctx", "tool", "where"), REMOVALS)
def test_a_removal_is_named_by_its_list(
    ctx: RunContext, tool: str, where: str, policy_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    res = resolve(load_policy_text(POLICY), ctx)
    removal = res.removal(tool)
    assert removal is not None and removal.kind == "deny"
    assert removal.label == where
    # resolve, text and JSON
    main(["resolve", str(policy_file), *_flags(ctx)])
    assert f"{where}: " in capsys.readouterr().out
    main(["resolve", str(policy_file), "--format", "json", *_flags(ctx)])
    rows = json.loads(capsys.readouterr().out)["removed"]
    assert {"tool": tool, "label": where} in [
        {"tool": r["tool"], "label": r["label"]} for r in rows
    ]
    # explain: the headline and the trail line of the layer that removed it
    main(["explain", str(policy_file), "--tool", tool, "--trail", *_flags(ctx)])
    out = capsys.readouterr().out
    assert f"({where})" in out
    assert f"] {where}: applied, removed {tool}" in out
    # the whole trail names the deny list after the tools it removed
    main(["explain", str(policy_file), "--trail", *_flags(ctx)])
    assert f" by {where})" in capsys.readouterr().out
    # simulate: the refusal of a call to it
    calls = policy_file.parent / "calls.jsonl"
    calls.write_text(json.dumps({"tool": tool, "args": {}}) + "\n")
    main(["simulate", str(policy_file), "--calls", str(calls), "--format", "json", *_flags(ctx)])
    assert json.loads(capsys.readouterr().out)["calls"][0]["label"] == where


@pytest.mark.parametrize(("ctx", "tool", "args", "effect", "where"), CALLS)
def test_a_call_rule_is_named_by_its_list(
    ctx: RunContext, tool: str, args: dict[str, object], effect: str, where: str
) -> None:
    res = resolve(load_policy_text(POLICY), ctx)
    decision = res.decide_call(tool, args)
    assert decision.effect.label == effect
    assert decision.verdict.rule_list == where
    assert decision.verdict.to_json()["layer"] == where
    # explain --call, text and JSON
    explained = explain_call(res, tool, args)
    assert f"({where})" in explained.render()
    assert explained.to_json()["decidedBy"]["layer"] == where
    # the runtime's refusal (and, for an ask, the approver's reason reads the same sentence)
    if effect != "allow":
        assert f"at {where}" in refusal_reason(tool, decision.verdict, "layer")
    # resolve --format json lists the rule under its list
    rows = res.to_json()["callRules"][tool]  # type: ignore[index]
    assert where in {r["layer"] for r in rows}


def test_the_runtime_names_ask_lists_when_no_approver_can_answer() -> None:
    res = resolve(load_policy_text(POLICY), RunContext(agent="coder"))
    asking = asking_rules(res)
    assert "tools.ask: exec(git push *)" in asking
    assert "tools.ask: write" in asking
    assert "agents.entries.coder.tools.ask: edit(./.github/**)" in asking
    assert not [a for a in asking if ".allow" in a]
    docs = asking_rules(resolve(load_policy_text(POLICY), RunContext(agent="docs")))
    assert "agents.entries.docs.tools.callDefault: web_fetch ask" in docs


def test_a_policy_test_failure_names_the_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "policy.yaml").write_text(POLICY)
    (tmp_path / "policy.test.yaml").write_text(
        "policy: policy.yaml\ncases:\n"
        "  - name: rm is allowed (it is not)\n"
        "    context: {}\n"
        "    calls:\n"
        "      - {tool: exec, args: {command: rm -rf x}, expect: allow}\n"
    )
    main(["test", str(tmp_path / "policy.test.yaml")])
    out = capsys.readouterr().out
    assert "tools.deny" in out and "tools.allow" not in out
