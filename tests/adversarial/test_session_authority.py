"""The session key is the authority (semantics 7.10): a caller-supplied agent, spawning
session, subagent depth, channel or group that disagrees with it is ignored with a
diagnostic, in the Python API (and so in the CLI and the runtime, which call it)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from policyctl import RunContext, Sender, load_policy_text, resolve

POLICY = """
catalog: openclaw
agents:
  entries:
    admin: {}
    intern:
      tools: {deny: [exec, write, secrets]}
channels:
  slack:
    groups:
      C1: {tools: {deny: [exec, write]}}
      C2: {tools: {allow: ["*"]}}
"""


def codes(res: object) -> list[str]:
    return [w.code for w in res.warnings]  # type: ignore[attr-defined]


def test_spawned_by_cannot_pick_another_group_for_a_run_that_is_not_spawned() -> None:
    policy = load_policy_text(POLICY)
    res = resolve(
        policy,
        RunContext(session_key="agent:main:slack:group:C1", spawned_by="agent:main:slack:group:C2"),
    )
    assert not res.is_allowed("exec") and res.context.group == "C1"
    assert "PC384" in codes(res)


def test_a_subagent_key_keeps_its_depth_whatever_the_caller_says() -> None:
    """`--subagent-depth 0` on a `...:subagent:...` key made the run `main` and skipped
    layer 10, hard deny included."""
    policy = load_policy_text(POLICY)
    res = resolve(
        policy,
        RunContext(
            session_key="agent:main:subagent:x",
            spawned_by="agent:main:slack:group:C2",
            subagent_depth=0,
        ),
    )
    assert res.context.subagent_depth == 1
    for tool in ("sessions_send", "message"):
        assert not res.is_allowed(tool), tool
    assert "PC384" in codes(res)


def test_the_agent_comes_from_the_session_key() -> None:
    policy = load_policy_text(POLICY)
    res = resolve(policy, RunContext(agent="admin", session_key="agent:intern:main"))
    assert res.context.agent == "intern"
    assert not res.is_allowed("exec") and not res.is_allowed("secrets")
    assert "PC384" in codes(res)
    # agreeing fields say nothing
    res = resolve(policy, RunContext(agent="intern", session_key="agent:intern:main"))
    assert "PC384" not in codes(res)


def test_a_two_part_key_names_the_agent_too() -> None:
    """F17: `agent:intern` (no rest) parsed as no agent, so `--agent admin` decided."""
    policy = load_policy_text(POLICY)
    res = resolve(policy, RunContext(agent="admin", session_key="agent:intern"))
    assert res.context.agent == "intern"
    assert not res.is_allowed("exec") and not res.is_allowed("secrets")
    assert "PC384" in codes(res)
    assert "PC384" not in codes(resolve(policy, RunContext(session_key="agent:intern")))


def test_a_spawning_key_of_another_agent_keeps_the_spawners_place() -> None:
    """An agent may spawn a subagent of another agent (OpenClaw's `subagents.allowAgents`):
    the child runs as its own key's agent, in the spawning session's channel and group, so
    that group's rules still narrow it. Ignoring such a spawner would drop its group deny."""
    policy = load_policy_text(POLICY)
    res = resolve(
        policy,
        RunContext(session_key="agent:main:subagent:x", spawned_by="agent:admin:slack:group:C2"),
    )
    assert res.context.agent == "main" and res.context.group == "C2"


KEYS = [
    "agent:intern:main",
    "agent:intern:slack:group:C1",
    "agent:main:slack:group:C1",
    "agent:intern:subagent:a",
    "agent:main:subagent:a:subagent:b",
    "main",
    "agent:intern",
]
SPAWNERS = [
    None,
    "agent:main:slack:group:C1",
    "agent:intern:slack:group:C1",
    "agent:admin:slack:group:C2",
]


@settings(max_examples=200, deadline=None)
@given(
    key=st.sampled_from(KEYS),
    spawner=st.sampled_from(SPAWNERS),
    agent=st.sampled_from([None, "admin", "intern", "main", "nobody"]),
    group=st.sampled_from([None, "C1", "C2"]),
    depth=st.sampled_from([None, 0, 1, 2]),
    provider=st.sampled_from([None, "openai"]),
)
def test_caller_fields_never_beat_the_session_key(
    key: str,
    spawner: str | None,
    agent: str | None,
    group: str | None,
    depth: int | None,
    provider: str | None,
) -> None:
    """Property: adding caller fields to a context never gives a tool that the session key
    alone (with the spawning session, when the key says the run was spawned) does not."""
    policy = load_policy_text(POLICY)
    spawned = ":subagent:" in key
    honest = RunContext(
        session_key=key,
        spawned_by=spawner if spawned else None,
        provider=provider,
        sender=Sender(id="42"),
    )
    caller = RunContext(
        session_key=key,
        spawned_by=spawner,
        agent=agent,
        group=group,
        channel="slack" if group else None,
        subagent_depth=depth,
        provider=provider,
        sender=Sender(id="42"),
    )
    fair = resolve(policy, honest, require_tools=False)
    claimed = resolve(policy, caller, require_tools=False)
    assert set(claimed.allowed) <= set(fair.allowed)
