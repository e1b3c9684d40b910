"""Typos in a context are reported (PC450-PC454), in resolve and explain, text and JSON, and
in the runtime's log; the resolution itself still follows the semantics."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest
from conftest import EXAMPLES

from policyctl import RunContext, load_policy, load_policy_text, resolve
from policyctl.cli.main import main
from policyctl.pipeline.resolve import context_warnings
from policyctl.runtime import ProviderResponse, Runtime, ScriptedProvider, ToolRegistry

POLICY = """
catalog: openclaw
tools:
  byProvider:
    ollama: {profile: minimal}
agents:
  entries:
    support: {tools: {allow: [read, message]}}
channels:
  slack:
    groups:
      C0SUPPORT: {tools: {deny: [message]}}
    accounts:
      acme: {groups: {C0ACME: {tools: {deny: [read]}}}}
  telegram:
    groups:
      "*": {tools: {deny: [exec]}}
"""


@pytest.fixture(scope="module")
def policy():  # type: ignore[no-untyped-def]
    return load_policy_text(POLICY, "policy.yaml")


def codes(policy, **fields: object) -> list[str]:  # type: ignore[no-untyped-def]
    return [w.code for w in context_warnings(policy, RunContext(**fields))]  # type: ignore[arg-type]


def test_each_unknown_value_is_reported_with_the_closest_known_one(policy) -> None:  # type: ignore[no-untyped-def]
    [agent] = context_warnings(policy, RunContext(agent="suport"))
    assert agent.code == "PC450" and 'did you mean "support"?' in agent.message
    [provider] = context_warnings(policy, RunContext(provider="olama"))
    assert provider.code == "PC451" and 'did you mean "ollama"?' in provider.message
    [channel] = context_warnings(policy, RunContext(channel="slak", group="C0SUPPORT"))
    assert channel.code == "PC452" and 'did you mean "slack"?' in channel.message
    # an unconfigured channel named with a group: the group can never match anything
    assert codes(policy, channel="discord", group="G1") == ["PC452"]
    [group] = context_warnings(policy, RunContext(session_key="agent:support:slack:group:C0SUPORT"))
    assert group.code == "PC453" and 'did you mean "C0SUPPORT"?' in group.message
    assert "no group policy applies" in group.message
    [star] = context_warnings(policy, RunContext(channel="telegram", group="-100"))
    assert star.code == "PC453" and 'the "*" group applies' in star.message
    [account] = context_warnings(policy, RunContext(channel="slack", account="acm"))
    assert account.code == "PC454" and 'did you mean "acme"?' in account.message


def test_known_values_and_plain_other_values_are_quiet(policy) -> None:  # type: ignore[no-untyped-def]
    assert codes(policy, agent="support", provider="ollama", model="llama3") == []
    # a provider the policy has no rules for, and nothing close to: legitimate, not a typo
    assert codes(policy, provider="anthropic") == []
    # a DM in a channel without group policy names no group: nothing to mistype
    assert codes(policy, channel="discord") == []
    assert codes(policy, session_key="agent:support:slack:group:C0SUPPORT:topic:7") == []
    assert codes(policy, session_key="agent:support:slack:acme:group:C0ACME") == []
    # a scheduled run in an unknown account fails closed and says so with PC409 instead
    assert codes(policy, channel="slack", account="gone", trigger="cron") == []
    # a policy without agent entries has no agent to mistype
    bare = load_policy_text("catalog: openclaw\n", "bare.yaml")
    assert codes(bare, agent="anyone") == []


def test_the_resolution_still_follows_the_semantics(policy) -> None:  # type: ignore[no-untyped-def]
    typo = resolve(policy, RunContext(agent="suport"), require_tools=False)
    none = resolve(policy, RunContext(), require_tools=False)
    assert typo.allowed == none.allowed
    assert [w.code for w in typo.warnings].count("PC450") == 1


def test_resolve_and_explain_show_them_in_text_and_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    team = str(EXAMPLES / "team.yaml")
    assert main(["resolve", team, "--agent", "codr"]) == 0
    assert 'PC450 agent "codr"' in capsys.readouterr().out
    assert main(["resolve", team, "--provider", "olama", "--format", "json"]) == 0
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert any(w["code"] == "PC451" and "ollama" in w["message"] for w in warnings)
    assert main(["explain", team, "--agent", "codr", "--tool", "exec"]) == 0
    out = capsys.readouterr().out
    assert out.index("PC450") < out.index("exec:")
    assert main(["explain", team, "--agent", "codr", "--tool", "exec", "--format", "json"]) == 0
    assert "PC450" in {w["code"] for w in json.loads(capsys.readouterr().out)["warnings"]}


def test_the_runtime_logs_them_once(caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    policy = load_policy(EXAMPLES / "team.yaml")
    runtime = Runtime(
        policy, ToolRegistry(), ScriptedProvider([ProviderResponse("done"), ProviderResponse("x")])
    )
    with caplog.at_level(logging.WARNING, logger="policyctl.runtime"):
        asyncio.run(runtime.run_turn(RunContext(agent="reviewr"), "hi"))
        asyncio.run(runtime.run_turn(RunContext(agent="reviewr"), "again"))
    logged = [r.getMessage() for r in caplog.records if "PC450" in r.getMessage()]
    assert len(logged) == 1 and 'did you mean "reviewer"?' in logged[0]


@pytest.mark.parametrize(
    "model", ["gpt-5.4-mini:latest", "gpt-5.4-mini-2026-03-01", "gpt-5.4-mnii"]
)
def test_a_model_close_to_a_provider_model_key_is_reported(
    model: str, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """F29: a tagged or dated model id escaped the `openai/gpt-5.4-mini` deny silently. Keys
    stay exact (the resolution is unchanged); the near miss is reported, in text, JSON and
    the runtime log."""
    team = str(EXAMPLES / "team.yaml")
    policy = load_policy(EXAMPLES / "team.yaml")
    [near] = context_warnings(policy, RunContext(provider="openai", model=model))
    assert near.code == "PC451" and 'did you mean "openai/gpt-5.4-mini"?' in near.message
    assert resolve(policy, RunContext(provider="openai", model=model)).is_allowed("exec")
    assert (
        main(["resolve", team, "--provider", "openai", "--model", model, "--format", "json"]) == 0
    )
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert [w["code"] for w in warnings] == ["PC451"]
    assert main(["resolve", team, "--provider", "openai", "--model", model]) == 0
    assert "PC451" in capsys.readouterr().out
    runtime = Runtime(policy, ToolRegistry(), ScriptedProvider([ProviderResponse("done")]))
    with caplog.at_level(logging.WARNING, logger="policyctl.runtime"):
        asyncio.run(runtime.run_turn(RunContext(provider="openai", model=model), "hi"))
    assert any("PC451" in r.getMessage() and model in r.getMessage() for r in caplog.records)


def test_the_exact_model_and_unrelated_models_are_quiet() -> None:
    policy = load_policy(EXAMPLES / "team.yaml")
    for model in ("gpt-5.4-mini", "GPT-5.4-mini", "gpt-4o", "o3"):
        assert context_warnings(policy, RunContext(provider="openai", model=model)) == (), model
    assert context_warnings(policy, RunContext(provider="anthropic", model="gpt-5.4-mini:x")) == ()
