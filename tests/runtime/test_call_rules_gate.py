"""The gate decides every call on the arguments the tool will receive (call rules, issue 14).

A deny is a refusal the model reads (rule and layer, control characters escaped) and the tool
never runs; an ask goes to the approver (once / for the session / deny, a timeout denies);
without an approver an ask is refused and says so; a hook's rewrite is decided again.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from callrules_runtime_helpers import decider, environment, gate_with, recording_tool, rules

from policyctl.runtime import (
    Approval,
    Block,
    LoopConfig,
    RequireApproval,
    RewriteParams,
    SessionGrants,
    ToolCallEvent,
)

ENV = environment()


def exec_gate(calls: list[dict[str, Any]], **lists: Any) -> Any:
    layer_rules = rules("exec", ENV, **lists)
    return decider(ENV, agent=[layer_rules])


def body(outcome: Any) -> dict[str, Any]:
    return json.loads(outcome.content())  # type: ignore[no-any-return]


def test_a_denied_call_is_refused_with_rule_and_layer_and_never_runs() -> None:
    calls: list[dict[str, Any]] = []
    d = exec_gate(calls, deny=["exec(rm *)"])
    gate = gate_with([recording_tool("exec", calls, "command")], d)
    out = asyncio.run(gate.call("exec", {"command": "ls && rm -rf /"}))
    assert not out.ok and out.veto is not None and out.veto.kind == "policy"
    shown = body(out)
    assert shown["status"] == "blocked" and shown["by"] == "policy"
    assert 'call rule "exec(rm *)" at agent denies it' in shown["reason"]
    assert shown["decidedBy"] == {"layer": "agent", "entry": "exec(rm *)"}
    assert calls == []
    assert out.veto.provenance["decidedBy"]["source"] == "policy.yaml:1:5"
    ok = asyncio.run(gate.call("exec", {"command": "ls -l"}))
    assert ok.ok and calls == [{"command": "ls -l"}]


@pytest.mark.parametrize(
    ("detail", "expect_keys", "says"),
    [
        ("full", {"layer", "entry", "tool", "reason", "source", "subject"}, "policy.yaml"),
        ("layer", {"layer", "entry"}, "exec(rm *)"),
        ("minimal", None, "is not allowed in this run"),
    ],
)
def test_refusal_detail_levels(detail: str, expect_keys: set[str] | None, says: str) -> None:
    calls: list[dict[str, Any]] = []
    gate = gate_with(
        [recording_tool("exec", calls, "command")],
        exec_gate(calls, deny=["exec(rm *)"]),
        refusal_detail=detail,
    )
    shown = body(asyncio.run(gate.call("exec", {"command": "rm -rf x"})))
    if expect_keys is None:
        assert "decidedBy" not in shown and "exec(rm" not in json.dumps(shown)
    else:
        assert set(shown["decidedBy"]) == expect_keys
    assert says in json.dumps(shown)


def test_control_characters_of_the_call_are_escaped_in_the_refusal() -> None:
    calls: list[dict[str, Any]] = []
    gate = gate_with(
        [recording_tool("exec", calls, "command")],
        exec_gate(calls, deny=["exec(rm *)"]),
        refusal_detail="full",
    )
    out = asyncio.run(gate.call("exec", {"command": "rm '\x1b[2Jx\u202e'"}))
    assert out.veto is not None
    assert "\x1b" not in out.veto.reason and "\u202e" not in out.veto.reason
    assert "\\u001b[2Jx\\u202e" in out.veto.reason
    assert "\x1b" not in json.dumps(out.veto.detail, ensure_ascii=False)


def test_callDefault_deny_refuses_what_no_allow_admits() -> None:
    calls: list[dict[str, Any]] = []
    gate = gate_with(
        [recording_tool("exec", calls, "command")], exec_gate(calls, allow=["exec(git *)"])
    )
    assert asyncio.run(gate.call("exec", {"command": "git status"})).ok
    out = asyncio.run(gate.call("exec", {"command": "make"}))
    assert out.veto is not None and "no call rule at agent allows it" in out.veto.reason
    assert calls == [{"command": "git status"}]


def test_ask_without_approver_is_refused_and_says_approval_is_needed() -> None:
    calls: list[dict[str, Any]] = []
    gate = gate_with(
        [recording_tool("exec", calls, "command")], exec_gate(calls, ask=["exec(git push *)"])
    )
    out = asyncio.run(gate.call("exec", {"command": "git push origin main"}))
    assert out.veto is not None and out.veto.kind == "approval"
    assert "needs approval" in out.veto.reason and "no approver" in out.veto.reason
    assert 'call rule "exec(git push *)" at agent asks' in out.veto.reason
    assert calls == []


class Recorder:
    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[ToolCallEvent, str]] = []

    async def __call__(self, event: ToolCallEvent, reason: str) -> Any:
        self.asked.append((event, reason))
        return self.answers.pop(0)


def _ask_gate(approver: Any, calls: list[dict[str, Any]], **kw: Any) -> Any:
    return gate_with(
        [recording_tool("exec", calls, "command")],
        exec_gate(calls, ask=["exec(git push *)"]),
        approver=approver,
        **kw,
    )


def test_allow_once_runs_this_call_and_the_next_one_asks_again() -> None:
    calls: list[dict[str, Any]] = []
    approver = Recorder(Approval.ONCE, Approval.DENY)
    gate = _ask_gate(approver, calls)
    assert asyncio.run(gate.call("exec", {"command": "git push"})).ok
    second = asyncio.run(gate.call("exec", {"command": "git push"}))
    assert second.veto is not None and second.veto.kind == "approval"
    assert "not approved" in second.veto.reason
    assert len(approver.asked) == 2 and calls == [{"command": "git push"}]
    event, reason = approver.asked[0]
    assert event.params == {"command": "git push"}
    assert event.meta["callRule"]["entry"] == "exec(git push *)"
    assert "exec(git push *)" in reason


def test_allow_for_the_session_remembers_exactly_that_call() -> None:
    calls: list[dict[str, Any]] = []
    approver = Recorder(Approval.SESSION, Approval.DENY)
    gate = _ask_gate(approver, calls)
    for _ in range(3):
        assert asyncio.run(gate.call("exec", {"command": "git push"})).ok
    assert len(approver.asked) == 1
    other = asyncio.run(gate.call("exec", {"command": "git push --force"}))
    assert other.veto is not None and len(approver.asked) == 2
    assert calls == [{"command": "git push"}] * 3


def test_the_same_call_is_the_same_tool_arguments_and_rule_whatever_the_key_order() -> None:
    calls: list[dict[str, Any]] = []
    approver = Recorder(Approval.SESSION, Approval.DENY)
    gate = gate_with(
        [recording_tool("exec", calls, "command", "workdir")],
        exec_gate(calls, ask=["exec(git push *)"]),
        approver=approver,
    )
    assert asyncio.run(gate.call("exec", {"command": "git push", "workdir": "a"})).ok
    assert asyncio.run(gate.call("exec", {"workdir": "a", "command": "git push"})).ok
    assert len(approver.asked) == 1
    other = asyncio.run(gate.call("exec", {"command": "git push", "workdir": "./a"}))
    assert other.veto is not None and len(approver.asked) == 2


def test_session_grants_are_bounded() -> None:
    grants = SessionGrants(limit=2)
    for key in ("a", "b", "c"):
        grants.grant(key)
    assert "a" not in grants and "b" in grants and "c" in grants and len(grants) == 2


@pytest.mark.parametrize("answer", [True, Approval.ONCE])
def test_true_reads_as_allow_once(answer: Any) -> None:
    calls: list[dict[str, Any]] = []
    assert asyncio.run(_ask_gate(Recorder(answer), calls).call("exec", {"command": "git push"})).ok


@pytest.mark.parametrize("answer", [False, None, "yes", 1, "session", Approval.DENY])
def test_any_other_answer_denies(answer: Any) -> None:
    calls: list[dict[str, Any]] = []
    out = asyncio.run(_ask_gate(Recorder(answer), calls).call("exec", {"command": "git push"}))
    assert out.veto is not None and out.veto.kind == "approval" and calls == []


def test_a_hung_or_raising_approver_denies_and_the_loop_goes_on() -> None:
    async def hung(event: ToolCallEvent, reason: str) -> Approval:
        await asyncio.sleep(30)
        return Approval.ONCE

    async def broken(event: ToolCallEvent, reason: str) -> Approval:
        raise RuntimeError("approval service down")

    for approver in (hung, broken):
        calls: list[dict[str, Any]] = []
        gate = _ask_gate(approver, calls, approval_timeout=0.2)
        out = asyncio.run(asyncio.wait_for(gate.call("exec", {"command": "git push"}), 5))
        assert out.veto is not None and out.veto.kind == "approval" and calls == []


def test_a_hook_never_sees_a_denied_call() -> None:
    seen: list[dict[str, Any]] = []

    async def hook(event: ToolCallEvent) -> None:
        seen.append(event.params)

    calls: list[dict[str, Any]] = []
    gate = gate_with(
        [recording_tool("exec", calls, "command")],
        exec_gate(calls, deny=["exec(rm *)"]),
        hooks=[hook],
    )
    assert asyncio.run(gate.call("exec", {"command": "rm -rf /"})).veto is not None
    assert seen == [] and calls == []


def test_a_rewriting_hook_cannot_dodge_the_decision() -> None:
    async def sneaky(event: ToolCallEvent) -> RewriteParams:
        return RewriteParams({"command": "rm -rf /"})

    calls: list[dict[str, Any]] = []
    d = exec_gate(calls, deny=["exec(rm *)"])
    gate = gate_with([recording_tool("exec", calls, "command")], d, hooks=[sneaky])
    out = asyncio.run(gate.call("exec", {"command": "ls"}))
    assert out.veto is not None and out.veto.kind == "policy" and calls == []
    assert [args["command"] for _, args in d.calls] == ["ls", "rm -rf /"]


def test_a_rewrite_into_an_asking_call_asks_about_the_final_arguments() -> None:
    async def rewrite(event: ToolCallEvent) -> RewriteParams:
        return RewriteParams({"command": "git push origin main"})

    calls: list[dict[str, Any]] = []
    approver = Recorder(Approval.ONCE)
    gate = gate_with(
        [recording_tool("exec", calls, "command")],
        exec_gate(calls, ask=["exec(git push *)"]),
        hooks=[rewrite],
        approver=approver,
    )
    assert asyncio.run(gate.call("exec", {"command": "git status"})).ok
    assert [e.params for e, _ in approver.asked] == [{"command": "git push origin main"}]
    assert calls == [{"command": "git push origin main"}]


def test_a_hook_question_and_a_rule_question_are_asked_once_together() -> None:
    async def ask(event: ToolCallEvent) -> RequireApproval:
        return RequireApproval("pushes are audited")

    calls: list[dict[str, Any]] = []
    approver = Recorder(Approval.SESSION, Approval.ONCE)
    gate = _ask_gate(approver, calls, hooks=[ask])
    assert asyncio.run(gate.call("exec", {"command": "git push"})).ok
    assert len(approver.asked) == 1
    assert "exec(git push *)" in approver.asked[0][1]
    assert "pushes are audited" in approver.asked[0][1]
    # the hook asks every time: a session grant answers the rule's question, not the hook's
    assert asyncio.run(gate.call("exec", {"command": "git push"})).ok
    assert len(approver.asked) == 2


def test_a_blocking_hook_stops_an_asking_call_before_anyone_is_asked() -> None:
    async def block(event: ToolCallEvent) -> Block:
        return Block("frozen branch")

    calls: list[dict[str, Any]] = []
    approver = Recorder(Approval.ONCE)
    out = asyncio.run(
        _ask_gate(approver, calls, hooks=[block]).call("exec", {"command": "git push"})
    )
    assert out.veto is not None and out.veto.kind == "hook" and approver.asked == []


def test_denied_calls_count_for_loop_detection() -> None:
    calls: list[dict[str, Any]] = []
    gate = gate_with(
        [recording_tool("exec", calls, "command")],
        exec_gate(calls, deny=["exec(rm *)"]),
        loop_config=LoopConfig(warning=2, critical=3, breaker=10),
    )
    kinds = [
        asyncio.run(gate.call("exec", {"command": "rm x"})).veto.kind  # type: ignore[union-attr]
        for _ in range(3)
    ]
    assert kinds == ["policy", "policy", "loop"]


def test_a_decider_that_fails_refuses_the_call() -> None:
    class Broken:
        def decide_call(self, tool: str, args: Any) -> Any:
            raise RuntimeError("boom")

    calls: list[dict[str, Any]] = []
    gate = gate_with([recording_tool("exec", calls, "command")], Broken())  # type: ignore[arg-type]
    out = asyncio.run(gate.call("exec", {"command": "ls"}))
    assert out.veto is not None and "could not be decided" in out.veto.reason and calls == []


def test_a_tool_without_call_rules_is_decided_and_runs() -> None:
    calls: list[dict[str, Any]] = []
    d = exec_gate(calls, deny=["exec(rm *)"])
    gate = gate_with([recording_tool("web_search", calls, "query")], d)
    assert asyncio.run(gate.call("web_search", {"query": "rm -rf"})).ok
    assert d.calls == [("web_search", {"query": "rm -rf"})]


def test_the_runtime_reads_effects_by_their_values_and_loads_no_shell_parser() -> None:
    import subprocess
    import sys

    from policyctl.callrules import Effect
    from policyctl.runtime import callcheck

    assert tuple(Effect) == (callcheck.ALLOW, callcheck.ASK, callcheck.DENY)
    probe = (
        "import sys, policyctl.runtime; "
        "print('policyctl.callrules.shell' in sys.modules, 'http.client' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_the_approver_and_the_refusal_name_the_list_a_rule_is_written_in() -> None:
    # resolved from a real policy, the rules carry their scope: an ask is `tools.ask`, a deny
    # `tools.deny`, in the approver's event and reason and in the model's refusal (issue 20)
    from callrules_runtime_helpers import RulesDecider

    from policyctl import load_policy_text, resolve

    text = 'catalog: nanobot\ntools:\n  ask: ["exec(git push *)"]\n  deny: ["exec(rm *)"]\n'
    res = resolve(load_policy_text(text), None)
    calls: list[dict[str, Any]] = []
    approver = Recorder(Approval.DENY)
    gate = gate_with(
        [recording_tool("exec", calls, "command")],
        RulesDecider(res.call_layers, res.call_environment()),
        approver=approver,
    )
    asked = asyncio.run(gate.call("exec", {"command": "git push"}))
    event, reason = approver.asked[0]
    assert event.meta["callRule"]["layer"] == "tools.ask"
    assert "at tools.ask" in reason and asked.veto is not None
    refused = asyncio.run(gate.call("exec", {"command": "rm -rf build"}))
    assert refused.veto is not None and "at tools.deny denies it" in refused.veto.reason
    assert body(refused)["decidedBy"]["layer"] == "tools.deny"
    assert calls == []
