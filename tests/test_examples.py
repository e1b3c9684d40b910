"""The shipped examples behave as their headers say, and together cover all eleven layers."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES, removed_at, run

from policyctl import load_policy


@pytest.fixture(scope="module")
def team():  # type: ignore[no-untyped-def]
    return load_policy(EXAMPLES / "team.yaml")


@pytest.fixture(scope="module")
def chatbot():  # type: ignore[no-untyped-def]
    return load_policy(EXAMPLES / "chatbot.yaml")


@pytest.fixture(scope="module")
def platform():  # type: ignore[no-untyped-def]
    return load_policy(EXAMPLES / "platform.toml")


def test_team_coder(team) -> None:  # type: ignore[no-untyped-def]
    res = run(team, agent="coder", provider="openai", model="gpt-5.4")
    assert {"exec", "write", "apply_patch"} <= set(res.allowed)
    assert removed_at(res, "secrets") == 5
    assert removed_at(res, "screen") == 3 and res.removal("screen").expanded_from == "group:ui"
    assert removed_at(res, "browser") == 1
    mini = run(team, agent="coder", provider="openai", model="gpt-5.4-mini")
    assert removed_at(mini, "exec") == 4 and removed_at(mini, "code_execution") == 4


def test_team_local_models_get_the_minimal_profile(team) -> None:  # type: ignore[no-untyped-def]
    res = run(team, agent="coder", provider="ollama", model="qwen3")
    assert res.allowed == ("ls", "read", "presence", "session_status", "skills_read")
    assert removed_at(res, "write") == 2
    assert res.layers[1].label == "tools.byProvider.profile (minimal)"


def test_team_reviewer(team) -> None:  # type: ignore[no-untyped-def]
    res = run(team, agent="reviewer", provider="openai")
    assert removed_at(res, "write") == 5 and res.removal("write").kind == "allow"
    assert removed_at(res, "web_fetch") == 6
    assert "exec" not in res.allowed
    assert set(res.allowed) == {
        "ls",
        "read",
        "web_search",
        "sessions_list",
        "sessions_history",
        "github_identity_status",
        "github_publish",
        "session_status",
        "skills_read",
    }


def test_team_docs(team) -> None:  # type: ignore[no-untyped-def]
    res = run(team, agent="docs", provider="anthropic")
    assert res.allowed == ("read", "write", "edit", "web_search", "web_fetch", "skills_read")
    res = run(team, agent="docs", provider="openai")
    assert "apply_patch" in res.allowed


def test_chatbot_engineering_group(chatbot) -> None:  # type: ignore[no-untyped-def]
    key = "agent:support:slack:group:C0ENGINEERING"
    other = run(chatbot, agent="support", session_key=key, sender={"id": "U777"})
    assert other.context.sandboxed
    assert removed_at(other, "theme") == 7
    assert removed_at(other, "sessions") == 9 and removed_at(other, "conversations_list") == 9
    assert "message" in other.allowed and "exec" not in other.allowed
    assert removed_at(other, "web_fetch") == 8 and removed_at(other, "sessions_spawn") == 8
    ada = run(chatbot, agent="support", session_key=key, sender={"username": "@ada"})
    assert {"web_fetch", "sessions_spawn"} <= set(ada.allowed)


def test_chatbot_other_groups(chatbot) -> None:  # type: ignore[no-untyped-def]
    res = run(
        chatbot,
        agent="support",
        session_key="agent:support:slack:group:C0RANDOM",
        sender={"username": "ada"},
    )
    assert removed_at(res, "web_fetch") == 7
    res = run(
        chatbot,
        agent="support",
        sender={"id": "U777"},
        session_key="agent:support:slack:acme-enterprise:group:C0SECURE",
    )
    assert res.allowed == ("read", "web_search", "session_status", "skills_read")
    res = run(
        chatbot,
        agent="support",
        sender={"id": "111"},
        session_key="agent:support:telegram:group:-1001234567890",
    )
    assert {"sessions_spawn", "web_fetch"} <= set(res.allowed)
    assert not res.layers[7].applied


def test_chatbot_main_session(chatbot) -> None:  # type: ignore[no-untyped-def]
    res = run(chatbot, agent="support", session_key="agent:support:main", sender={"id": "111"})
    assert not res.context.sandboxed
    assert {"sessions", "ask_user"} <= set(res.allowed)


def test_platform_orchestrator(platform) -> None:  # type: ignore[no-untyped-def]
    res = run(platform, agent="orchestrator", session_key="agent:orchestrator:main")
    mcp = [t for t in res.allowed if "__" in t]
    assert mcp == [
        "github__search_code",
        "github__create_pr",
        "github__merge_pr",
        "linear__list_issues",
        "linear__create_issue",
    ]
    assert removed_at(res, "github__delete_repo") == 3
    assert res.removal("voice_call").kind == "optional-plugin"
    assert "deploy_preview" in res.allowed


def test_platform_subagents_and_inheritance(platform) -> None:  # type: ignore[no-untyped-def]
    first = run(platform, agent="orchestrator", session_key="agent:orchestrator:subagent:a")
    assert first.context.role == "orchestrator" and "sessions_spawn" in first.allowed
    assert removed_at(first, "linear__create_issue") == 10
    leaf = run(
        platform, agent="orchestrator", session_key="agent:orchestrator:subagent:a:subagent:b"
    )
    assert leaf.context.role == "leaf" and removed_at(leaf, "sessions_spawn") == 10
    builder = run(platform, agent="builder", session_key="agent:builder:main")
    assert removed_at(builder, "web_search") == 9 and removed_at(builder, "code_execution") == 9
    assert {"deploy_preview", "github__create_pr"} <= set(builder.allowed)
    child = run(
        platform,
        agent="builder",
        session_key="agent:builder:subagent:c",
        spawned_by="agent:builder:main",
        parent=builder.capture(),
        trigger="spawn",
    )
    assert set(child.allowed) <= set(builder.allowed)
    assert child.layers[10].applied


def test_examples_cover_every_layer(team, chatbot, platform) -> None:  # type: ignore[no-untyped-def]
    runs = [
        run(team, agent="coder", provider="ollama"),
        run(team, agent="reviewer", provider="openai"),
        run(team, agent="coder", provider="openai", model="gpt-5.4-mini"),
        run(
            chatbot,
            agent="support",
            session_key="agent:support:slack:group:C0ENGINEERING",
            sender={"id": "U1"},
        ),
        run(platform, agent="orchestrator", session_key="agent:orchestrator:subagent:a"),
    ]
    builder = run(platform, agent="builder", session_key="agent:builder:main")
    runs.append(
        run(
            platform,
            agent="builder",
            session_key="agent:builder:subagent:c",
            parent=builder.capture(),
        )
    )
    removing = {layer.stage for res in runs for layer in res.layers if layer.removed}
    assert removing | {layer.stage for layer in runs[-1].layers if layer.applied} >= set(
        range(1, 12)
    )
    assert removing >= set(range(1, 11))


@pytest.mark.parametrize(
    ("example", "contexts"),
    [
        (
            "team.yaml",
            [
                {"agent": "coder", "provider": "openai", "model": "gpt-5.4-mini"},
                {"agent": "reviewer", "provider": "openai"},
                {"agent": "docs"},
                {"agent": "coder", "provider": "ollama"},
            ],
        ),
        (
            "chatbot.yaml",
            [
                {
                    "agent": "support",
                    "session_key": "agent:support:slack:group:C0ENGINEERING",
                    "sender": {"id": "U1"},
                },
                {
                    "agent": "support",
                    "session_key": "agent:support:slack:acme-enterprise:group:C0SECURE",
                },
            ],
        ),
        (
            "platform.toml",
            [
                {"agent": "builder", "session_key": "agent:builder:main"},
                {
                    "agent": "orchestrator",
                    "session_key": "agent:orchestrator:subagent:a:subagent:b",
                },
            ],
        ),
    ],
)
def test_every_removed_tool_is_explained_with_entry_and_line(
    example: str, contexts: list[dict]
) -> None:  # type: ignore[type-arg]
    from policyctl.explain.tool import decide_tool

    policy = load_policy(EXAMPLES / example)
    for fields in contexts:
        res = run(policy, require_tools=False, **fields)
        for r in res.removed:
            decision = decide_tool(res, r.tool)
            assert decision.fix, r
            if r.stage == 0 or r.origin in ("catalog", "inherited", "profile"):
                continue  # catalog rules have no line in the policy; the fix names the rule
            assert r.source is not None and r.source.file.endswith(example), r
            if r.kind == "deny":
                assert r.entry is not None
                line = (
                    (EXAMPLES / example).read_text(encoding="utf-8").splitlines()[r.source.line - 1]
                )
                assert (r.written_as or r.entry) in line, (r, line)


def test_every_shipped_yaml_example_passes_the_readme_fmt_check() -> None:
    from policyctl.cli.main import main

    files = sorted(str(p) for p in EXAMPLES.glob("*.yaml"))
    assert any(f.endswith("chatbot.test.yaml") for f in files)
    assert main(["fmt", "--check", *files]) == 0  # README's CI: fmt --check policies/*.yaml
