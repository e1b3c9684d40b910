"""Every layer that can carry call rules refuses a call on its own, and names itself as the
layer that decided: the call-level twin of the eleven-layer refusal test (tests/runtime/
test_entrypoints.py). Profiles (layers 1 and 2) are name-level only. Also: a child run inherits
its parent's call rules as its inheritance layer (directly, through `capture()` and through a
cron job), and runs that differ only by workspace share the name-level answer but not roots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from policyctl import Capture, RunContext, Sender, load_policy_text, resolve
from policyctl.explain.call import explain_call
from policyctl.located import scope_list
from policyctl.pipeline.resolve import cap_cron_tools

RM = '"exec(rm *)"'

# The base context applies every layer: agent coder, provider openai, a subagent spawned from
# telegram group -100 by sender 42, sandboxed (mode all), with a parent run.
SKELETON = """
catalog: openclaw
tools:
  profile: coding
  deny: [{L3}]
  byProvider:
    openai: {{deny: [{L4}]}}
  toolsBySender:
    "*": {{deny: [{L8}]}}
  sandbox:
    tools:
      allow: ["*"]
      deny: [{L9}]
  subagents:
    tools: {{deny: [{L10}]}}
agents:
  defaults:
    sandbox: {{mode: all}}
    subagents: {{maxSpawnDepth: 3}}
  entries:
    coder:
      tools:
        deny: [{L5}]
        byProvider:
          openai: {{deny: [{L6}]}}
channels:
  telegram:
    groups:
      "-100":
        tools: {{deny: [{L7}]}}
"""

SENDER_RULE = """
      "-100":
        toolsBySender:
          "id:42": {deny: ["exec(rm *)"]}
        tools: {deny: []}
"""

LAYERS = ["L3", "L4", "L5", "L6", "L7", "L8", "L9", "L10"]


def _policy_text(at: str | None) -> str:
    # an unused slot holds a harmless name-level deny, so each layer stays applied
    fields = {name: (RM if name == at else "browser") for name in LAYERS}
    return SKELETON.format(**fields)


def _base(parent: Capture | None = None) -> RunContext:
    return RunContext(
        agent="coder",
        provider="openai",
        sender=Sender(id="42"),
        session_key="agent:coder:subagent:s1",
        spawned_by="agent:coder:telegram:group:-100",
        subagent_depth=1,
        parent=parent or Capture(None, ("canvas",)),
    )


def _parent_with_rm_denied() -> Capture:
    parent_policy = load_policy_text('tools:\n  deny: ["exec(rm *)"]\n')
    return resolve(parent_policy, RunContext()).capture()


def _rm(res: Any) -> Any:
    return res.decide_call("exec", {"command": "rm -rf build"})


CASES: list[tuple[str, int]] = [*((name, int(name[1:])) for name in LAYERS), ("L11", 11)]


@pytest.mark.parametrize(("slot", "stage"), CASES)
def test_a_call_deny_at_each_layer_refuses_alone(slot: str, stage: int) -> None:
    if slot == "L11":
        policy = load_policy_text(_policy_text(None))
        res = resolve(policy, _base(_parent_with_rm_denied()))
    else:
        policy = load_policy_text(_policy_text(slot))
        res = resolve(policy, _base())
    trail = res.layers[stage - 1]
    assert trail.applied and trail.stage == stage
    assert res.is_allowed("exec")  # call rules never remove the name
    decision = _rm(res)
    assert decision.effect.label == "deny"
    assert decision.verdict.layer == trail.label
    assert decision.verdict.entry == "exec(rm *)"
    assert [v.layer for v in decision.layers if v.effect.label == "deny"] == [trail.label]
    assert res.decide_call("exec", {"command": "ls"}).effect.label == "allow"
    # explain --call says which layer decided, under the layer's deny key
    text = explain_call(res, "exec", {"command": "rm -rf build"}).render()
    # the deny is named by the list it is written in (the parent's, for an inherited rule)
    deny_list = scope_list(decision.verdict.scope or "", "deny")
    assert decision.verdict.rule_list == deny_list and deny_list.endswith(".deny")
    assert f"layer {stage} " in text and f"({deny_list}): deny" in text


def test_the_group_sender_rule_refuses_alone() -> None:
    text = _policy_text(None).replace(
        '      "-100":\n        tools: {deny: [browser]}\n', SENDER_RULE
    )
    res = resolve(load_policy_text(text), _base())
    trail = res.layers[6]
    # the group's sender rule applied (its `tools` was skipped), under the group layer's label
    assert trail.applied and trail.scope is not None and "toolsBySender" in trail.scope
    verdict = _rm(res).verdict
    assert verdict.layer == trail.label and verdict.effect.label == "deny"
    assert verdict.source is not None and verdict.source.line == 32


def test_without_any_call_deny_the_call_is_allowed() -> None:
    res = resolve(load_policy_text(_policy_text(None)), _base())
    assert _rm(res).effect.label == "allow"
    assert res.call_layers == ()


def test_a_child_cannot_call_what_its_parent_could_not() -> None:
    parent_policy = load_policy_text(
        'tools:\n  ask: ["exec(git push *)"]\n  deny: ["exec(rm *)"]\n'
    )
    parent = resolve(parent_policy, RunContext(agent="main"))
    child_ctx = RunContext(session_key="agent:main:subagent:c1", parent=parent.capture())
    child = resolve(load_policy_text("tools:\n  profile: coding\n"), child_ctx)
    assert child.decide_call("exec", {"command": "rm x"}).effect.label == "deny"
    push = child.decide_call("exec", {"command": "git push origin"})
    assert push.effect.label == "ask" and push.verdict.layer == "inherited tools"
    # and the grandchild, through the child's capture
    grandchild = resolve(
        load_policy_text("tools:\n  profile: coding\n"),
        RunContext(session_key="agent:main:subagent:c1:subagent:c2", parent=child.capture()),
    )
    assert grandchild.decide_call("exec", {"command": "rm x"}).effect.label == "deny"


def test_a_cron_job_keeps_its_creators_call_rules() -> None:
    policy = load_policy_text('tools:\n  deny: ["exec(rm *)"]\n')
    creator = resolve(policy, RunContext(agent="main"))
    cap = cap_cron_tools(creator, None, policy.catalog)
    job = resolve(
        load_policy_text("tools: {profile: coding}\n"),
        RunContext(trigger="cron", parent=cap.capture()),
    )
    assert job.decide_call("exec", {"command": "rm x"}).effect.label == "deny"


def test_workspace_is_out_of_the_cache_key_but_decides_paths(tmp_path: Path) -> None:
    policy = load_policy_text('tools:\n  deny: ["read(./secrets/)"]\n')
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    res_one = resolve(policy, RunContext(workspace=str(one)))
    res_two = resolve(policy, RunContext(workspace=str(two)))
    secret = str(one / "secrets" / "key")
    assert res_one.decide_call("read", {"path": secret}).effect.label == "deny"
    assert res_two.decide_call("read", {"path": secret}).effect.label == "allow"
    assert res_two.decide_call("read", {"path": "secrets/key"}).effect.label == "deny"
    assert RunContext(workspace="a") == RunContext(workspace="b")


def test_child_context_carries_call_rules_and_roots(tmp_path: Path) -> None:
    from policyctl.pipeline.lineage import child_context

    policy = load_policy_text('tools:\n  deny: ["read(./secrets/)"]\n')
    parent_ctx = RunContext(agent="main", session_key="agent:main:main", workspace=str(tmp_path))
    parent = resolve(policy, parent_ctx)
    child_ctx = child_context(parent_ctx, parent, "c1")
    assert child_ctx.workspace == str(tmp_path)
    child = resolve(load_policy_text("tools: {profile: coding}\n"), child_ctx)
    decision = child.decide_call("read", {"path": "secrets/key"})
    assert decision.effect.label == "deny" and decision.verdict.layer == "inherited tools"


def test_equal_contexts_with_different_parent_call_rules_decide_apart() -> None:
    parent = resolve(load_policy_text('tools:\n  deny: ["exec(rm *)"]\n'), RunContext())
    strict = parent.capture()
    lax = Capture(strict.allow, strict.deny, strict.source)  # the same tools, no call rules
    assert strict == lax and hash(strict) == hash(lax)  # one cached name-level answer
    policy = load_policy_text("tools: {profile: coding}\n")
    key = "agent:main:subagent:c1"
    for first, second in ((lax, strict), (strict, lax)):
        a = resolve(policy, RunContext(session_key=key, parent=first))
        b = resolve(policy, RunContext(session_key=key, parent=second))
        assert _rm(a).effect.label == ("deny" if first is strict else "allow")
        assert _rm(b).effect.label == ("deny" if second is strict else "allow")
