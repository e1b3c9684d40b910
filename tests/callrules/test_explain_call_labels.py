"""`explain --call` names the list of the rule that decided: a deny rule is shown under the
layer's deny key and an ask rule under its ask key, as `explain --tool` shows a removal by a
deny list, never under the layer's allow label."""

from __future__ import annotations

from typing import Any

from policyctl import RunContext, load_policy_text, resolve
from policyctl.explain.call import explain_call

POLICY = """\
tools:
  allow: [exec, read]
  deny: ["exec(rm *)", write]
  ask: ["exec(git push *)"]
agents:
  list:
    - id: coder
      tools:
        deny: ["exec(curl *)"]
"""


def _explained(command: str, agent: str | None = None) -> Any:
    res = resolve(load_policy_text(POLICY), RunContext(agent=agent))
    return explain_call(res, "exec", {"command": command})


def test_a_deny_rule_is_labelled_with_the_deny_key() -> None:
    text = _explained("rm -rf x").render()
    assert "decided by: layer 3 global (tools.deny)" in text
    assert "layer 3 global (tools.deny): deny (deny rule" in text
    assert "(tools.allow)" not in text


def test_an_ask_rule_is_labelled_with_the_ask_key() -> None:
    text = _explained("git push origin main").render()
    assert "decided by: layer 3 global (tools.ask)" in text
    assert "(tools.allow)" not in text


def test_an_agent_deny_is_labelled_with_its_deny_key() -> None:
    text = _explained("curl http://x", agent="coder").render()
    # the document path of the list (the legacy agents.list is migrated to agents.entries)
    assert "decided by: layer 5 agent (agents.entries.coder.tools.deny)" in text


def test_an_admission_keeps_the_allow_label() -> None:
    text = _explained("ls").render()
    assert "(tools.allow)" in text and "(tools.deny)" not in text


def test_the_json_names_the_same_list_and_stage() -> None:
    out = _explained("rm -rf x").to_json()
    decided = out["decidedBy"]
    assert decided["layer"] == "tools.deny" and decided["stage"] == 3
    assert [row["layer"] for row in out["layers"]] == ["tools.deny"]
