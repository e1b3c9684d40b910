"""What a large policy's many small lists share: 100,000 sender rules that deny `exec` must
not each hold their own copy of what the lists say, nor an index that can never match."""

from __future__ import annotations

from policyctl import Inventory, RunContext, Sender, Tool, resolve
from policyctl.api import load_policy_text

POLICY = """\
catalog: openclaw
tools:
  toolsBySender:
    "id:a": {deny: [exec]}
    "id:b": {deny: [exec]}
    "id:c": {deny: [voice]}
"""


def test_sender_rules_that_say_the_same_share_one_signature() -> None:
    senders = load_policy_text(POLICY).global_tools.senders
    assert senders is not None
    a, b = senders.policies["id:a"], senders.policies["id:b"]
    assert a is not None and b is not None and a.deny is not None and b.deny is not None
    assert a.deny is not b.deny  # each keeps its own entries and where they were written
    assert a.deny.signature is b.deny.signature


def test_a_core_tool_name_is_not_indexed_as_a_plugin_id() -> None:
    senders = load_policy_text(POLICY).global_tools.senders
    assert senders is not None
    exec_rule, voice_rule = senders.policies["id:a"], senders.policies["id:c"]
    assert exec_rule is not None and exec_rule.deny is not None
    assert not exec_rule.deny.plugin_ids and "exec" in exec_rule.deny.names
    # a literal that is no core tool still stands for every tool of that plugin
    assert voice_rule is not None and voice_rule.deny is not None
    assert "voice" in voice_rule.deny.plugin_ids


def test_the_rules_still_decide_as_written() -> None:
    policy = load_policy_text(POLICY)
    tools = Inventory.build([Tool("exec"), Tool("read"), Tool("speak", "voice")], policy.catalog)
    allowed = {
        who: resolve(policy, RunContext(provider="openai", sender=Sender(id=who)), tools).allowed
        for who in ("a", "c", "z")
    }
    assert "exec" not in allowed["a"] and "speak" in allowed["a"]
    assert "exec" in allowed["c"] and "speak" not in allowed["c"]
    assert {"exec", "read", "speak"} <= set(allowed["z"])
