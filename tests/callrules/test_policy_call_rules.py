"""Call rules written in policy files: compiled, resolved and decided (contract sections 1-4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import MakePolicy, run

from policyctl import PolicyError
from policyctl.callrules import Effect
from policyctl.pipeline.result import Resolution

CONTRACT_EXAMPLE = """
tools:
  deny:  ["exec(rm *)", "exec(sudo *)", "read(**/.env)", "web_fetch(domain:*.internal)"]
  ask:   ["exec(git push *)"]
  allow: ["exec(git *)", "exec(npm run test *)", read, "web_fetch(domain:docs.python.org)"]
  callDefault: deny
"""


def decide(res: Resolution, tool: str, **args: Any) -> str:
    return res.decide_call(tool, args).effect.label


@pytest.mark.parametrize(
    ("tool", "args", "expect"),
    [
        ("exec", {"command": "git status"}, "allow"),
        ("exec", {"command": "git push origin main"}, "ask"),
        ("exec", {"command": "rm -rf /"}, "deny"),
        ("exec", {"command": "sudo ls"}, "deny"),
        ("exec", {"command": "ls"}, "deny"),  # callDefault: admitted by specifiers only
        ("exec", {"command": "git log && rm -rf x"}, "deny"),
        ("exec", {"command": "npm run test -- -x"}, "allow"),
        ("read", {"path": "src/main.py"}, "allow"),  # plain name in allow
        ("read", {"path": "deep/down/.env"}, "deny"),
        ("web_fetch", {"url": "https://docs.python.org/3/"}, "allow"),
        ("web_fetch", {"url": "https://api.corp.internal/x"}, "deny"),
        ("web_fetch", {"url": "https://example.com/"}, "deny"),
    ],
)
def test_contract_example_decides_calls(
    make_policy: MakePolicy, tmp_path: Path, tool: str, args: dict[str, Any], expect: str
) -> None:
    res = run(make_policy(CONTRACT_EXAMPLE), workspace=str(tmp_path))
    assert res.decide_call(tool, args).effect.label == expect


def test_names_first_allow_specifier_admits_and_deny_specifier_keeps(
    make_policy: MakePolicy,
) -> None:
    res = run(make_policy(CONTRACT_EXAMPLE))
    # allow specifiers admit exec and web_fetch by name; deny specifiers removed nothing
    assert {"exec", "read", "web_fetch"} <= set(res.allowed)
    assert "write" not in res.allowed
    only_deny = run(make_policy('tools:\n  deny: ["exec(rm *)"]\n'))
    assert "exec" in only_deny.allowed
    assert decide(only_deny, "exec", command="rm -r x") == "deny"
    assert decide(only_deny, "exec", command="ls") == "allow"


def test_plain_deny_still_removes_and_call_rules_never_bring_it_back(
    make_policy: MakePolicy,
) -> None:
    res = run(make_policy('tools:\n  deny: [exec]\n  allow: ["exec(git *)", read]\n'))
    assert "exec" not in res.allowed
    assert decide(res, "exec", command="git status") == "deny"


def test_ask_plain_name_asks_every_call(make_policy: MakePolicy) -> None:
    res = run(make_policy('tools:\n  deny: ["exec(rm *)"]\n  ask: [exec]\n'))
    assert decide(res, "exec", command="ls") == "ask"
    assert decide(res, "exec", command="rm x") == "deny"
    assert "exec" in res.allowed


def test_ask_group_expands(make_policy: MakePolicy) -> None:
    res = run(make_policy("tools:\n  ask: [group:fs]\n"))
    assert decide(res, "read", path="/x") == "ask"
    assert decide(res, "write", path="/x") == "ask"
    assert decide(res, "exec", command="ls") == "allow"


def test_call_default_ask(make_policy: MakePolicy) -> None:
    res = run(make_policy('tools:\n  allow: ["exec(git *)"]\n  callDefault: ask\n'))
    assert decide(res, "exec", command="git diff") == "allow"
    assert decide(res, "exec", command="make") == "ask"
    assert res.decide_call("exec", {"command": "make"}).verdict.entry == "callDefault"


def test_plain_name_beside_specifier_allows_unmatched_calls(make_policy: MakePolicy) -> None:
    res = run(make_policy('tools:\n  allow: ["exec(git *)", exec]\n'))
    assert decide(res, "exec", command="make") == "allow"


def test_decision_carries_layer_entry_and_location(make_policy: MakePolicy) -> None:
    policy = make_policy(CONTRACT_EXAMPLE)
    verdict = run(policy).decide_call("exec", {"command": "git push origin main"}).verdict
    assert verdict.effect is Effect.ASK
    assert verdict.layer == "tools.allow"
    assert verdict.entry == "exec(git push *)"
    assert str(verdict.source).endswith("policy.yaml:4:11")
    assert verdict.subject == "git push origin main"


def test_has_call_rules_and_call_layers(make_policy: MakePolicy) -> None:
    res = run(make_policy(CONTRACT_EXAMPLE))
    assert res.has_call_rules("exec") and res.has_call_rules("read")
    # skills_read reads through read (catalog relation): read's rules decide its calls too
    assert res.has_call_rules("skills_read")
    assert not res.has_call_rules("web_search")
    assert [layer.label for layer in res.call_layers] == ["tools.allow"]
    none = run(make_policy("tools:\n  deny: [browser]\n"))
    assert none.call_layers == ()
    assert not none.has_call_rules("read")


def test_call_rules_only_for_allowed_tools(make_policy: MakePolicy) -> None:
    res = run(make_policy('tools:\n  deny: ["write(/etc/**)", write]\n'))
    assert res.call_layers == ()


@pytest.mark.parametrize(
    ("entries", "code", "column"),
    [
        ('["exec(rm *"]', "PC350", 20),  # where the ")" is missing
        ('["read(!x)"]', "PC352", 16),  # the "!"
        ('["web_fetch(domain:example.*)"]', "PC353", None),
        ('["group:fs(./x)"]', "PC357", 11),
        ('["ex*(x)"]', "PC357", 11),
        ('["myplugin_tool(ls -l)"]', "PC354", None),
    ],
)
def test_bad_specifier_is_located_inside_the_entry(
    make_policy: MakePolicy, entries: str, code: str, column: int | None
) -> None:
    with pytest.raises(PolicyError) as info:
        make_policy(f"tools:\n  deny: {entries}\n")
    found = [d for d in info.value.diagnostics if d.code == code]
    assert found, [str(d) for d in info.value.diagnostics]
    assert found[0].source is not None and found[0].source.line == 2
    if column is not None:
        assert found[0].source.column == column
    assert found[0].source.column > 10  # past the opening quote, inside the entry


def test_specifier_in_also_allow_is_an_error_with_a_fix(make_policy: MakePolicy) -> None:
    with pytest.raises(PolicyError) as info:
        make_policy('tools:\n  profile: coding\n  alsoAllow: ["exec(git *)"]\n')
    [diag] = [d for d in info.value.diagnostics if d.code == "PC356"]
    assert diag.fix is not None and "allow" in diag.fix
    assert diag.source is not None and diag.source.line == 3


def test_hidden_characters_in_a_specifier_are_refused(make_policy: MakePolicy) -> None:
    with pytest.raises(PolicyError) as info:
        make_policy('tools:\n  deny: ["exec(rm\\u200b *)"]\n')
    assert "PC301" in {d.code for d in info.value.diagnostics}


def test_alias_in_tool_part(make_policy: MakePolicy) -> None:
    res = run(make_policy('tools:\n  deny: ["bash(rm *)"]\n'))
    assert decide(res, "exec", command="rm x") == "deny"


def test_commands_are_case_sensitive_in_specifiers(make_policy: MakePolicy) -> None:
    res = run(make_policy('tools:\n  deny: ["exec(RM *)"]\n'))
    assert decide(res, "exec", command="RM x") == "deny"
    assert decide(res, "exec", command="rm x") == "allow"


def test_grant_from_a_specifier_admitted_tool_keeps_its_rules(make_policy: MakePolicy) -> None:
    # write admits apply_patch (catalog grant); write admitted by specifiers only must not
    # admit apply_patch unrestricted: each file it patches is a write call (catalog relation),
    # decided by write's rules, even when apply_patch is also admitted by name
    res = run(make_policy('tools:\n  allow: ["write(/ws/src/**)"]\n'), provider="openai")
    assert "apply_patch" in res.allowed
    inside = "*** Begin Patch\n*** Add File: /ws/src/a.py\n+x\n*** End Patch\n"
    outside = "*** Begin Patch\n*** Add File: /etc/passwd\n+x\n*** End Patch\n"
    key = res.call_environment().spec("apply_patch").key or "input"
    assert res.decide_call("apply_patch", {key: inside}).effect.label == "allow"
    assert res.decide_call("apply_patch", {key: outside}).effect.label == "deny"
    plain = run(
        make_policy('tools:\n  allow: ["write(/ws/src/**)", apply_patch]\n'), provider="openai"
    )
    assert plain.decide_call("apply_patch", {key: outside}).effect.label == "deny"
    assert plain.decide_call("apply_patch", {key: inside}).effect.label == "allow"


def test_sandbox_default_deny_stays_beside_a_specifier_deny(make_policy: MakePolicy) -> None:
    text = (
        "agents:\n  defaults:\n    sandbox: {mode: all}\n"
        'tools:\n  sandbox:\n    tools:\n      deny: ["exec(rm *)"]\n'
    )
    res = run(make_policy(text), session_key="agent:main:main")
    assert res.context.sandboxed
    # the catalog's default sandbox lists stay in force: web_fetch is not in its allow list
    assert "web_fetch" not in res.allowed and "browser" not in res.allowed
    assert "exec" in res.allowed and "read" in res.allowed
    decision = res.decide_call("exec", {"command": "rm -rf x"})
    assert decision.effect.label == "deny" and decision.verdict.layer == "sandbox tools.allow"


def test_sandbox_call_rules_fall_back_per_list(make_policy: MakePolicy) -> None:
    text = (
        "agents:\n  defaults:\n    sandbox: {mode: all}\n"
        "  entries:\n    coder:\n      tools:\n        sandbox:\n"
        '          tools: {allow: ["exec(git *)", read]}\n'
        'tools:\n  sandbox:\n    tools:\n      deny: ["exec(git push *)"]\n'
    )
    res = run(make_policy(text), agent="coder", session_key="agent:coder:main")
    assert decide(res, "exec", command="git log") == "allow"  # the agent's allow rules
    assert decide(res, "exec", command="git push") == "deny"  # the global deny rules
    assert decide(res, "exec", command="make") == "deny"  # callDefault of the agent's allow


def test_specifier_on_a_covering_name_applies_to_every_covered_tool(
    make_policy: MakePolicy,
) -> None:
    res = run(make_policy('tools:\n  deny: ["canvas(action=eval)"]\n'))
    for tool in ("canvas", "show_widget"):
        assert decide(res, tool, action="eval") == "deny", tool
        assert decide(res, tool, action="present") == "allow", tool


def test_plain_ask_globs_and_plugin_ids_expand_over_the_run_inventory(
    make_policy: MakePolicy,
) -> None:
    text = (
        "inventory:\n  mcp: {github: {tools: [merge_pr, list_prs]}}\n"
        "  plugins: [{name: voice_call, pluginId: voice}]\n"
        'tools:\n  ask: ["github__merge*", voice]\n  deny: ["github__list_prs(repo=secret/*)"]\n'
    )
    res = run(make_policy(text))
    assert decide(res, "github__merge_pr", repo="acme/x") == "ask"
    assert decide(res, "voice_call", to="+1") == "ask"
    assert decide(res, "github__list_prs", repo="acme/x") == "allow"
    assert decide(res, "github__list_prs", repo="secret/x") == "deny"


def test_subagent_call_rules_apply_to_subagent_runs_only(make_policy: MakePolicy) -> None:
    text = 'tools:\n  subagents:\n    tools: {ask: [exec], deny: ["exec(curl *)"]}\n'
    policy = make_policy(text)
    child = run(policy, session_key="agent:main:subagent:c1")
    assert decide(child, "exec", command="ls") == "ask"
    assert decide(child, "exec", command="curl x") == "deny"
    main = run(policy, session_key="agent:main:main")
    assert decide(main, "exec", command="curl x") == "allow"


def test_an_allow_list_of_specifiers_only_restricts_calls_not_names(
    make_policy: MakePolicy,
) -> None:
    res = run(make_policy('tools:\n  allow: ["exec(git *)"]\n'))
    assert {"exec", "read", "write", "browser"} <= set(res.allowed)
    assert decide(res, "exec", command="git log") == "allow"
    assert decide(res, "exec", command="make") == "deny"  # admitted by specifiers only
    assert decide(res, "read", path="/x") == "allow"
    beside_names = run(make_policy('tools:\n  allow: [read, "exec(git *)"]\n'))
    assert set(beside_names.allowed) == {"read", "exec", "skills_read"}


def test_sandbox_default_allow_stays_beside_allow_specifiers(make_policy: MakePolicy) -> None:
    text = (
        "agents:\n  defaults:\n    sandbox: {mode: all}\n"
        'tools:\n  sandbox:\n    tools:\n      allow: ["exec(git *)"]\n'
    )
    res = run(make_policy(text), session_key="agent:main:main")
    assert {"exec", "read", "write"} <= set(res.allowed)  # the catalog's sandbox allow list
    assert "web_fetch" not in res.allowed
    assert decide(res, "exec", command="git log") == "allow"
    assert decide(res, "exec", command="make") == "deny"


def test_legacy_agents_list_carries_call_rules(make_policy: MakePolicy) -> None:
    text = (
        'agents:\n  list:\n    - id: a\n      tools:\n        deny: ["web_fetch(domain:x.com)"]\n'
    )
    res = run(make_policy(text), agent="a")
    assert decide(res, "web_fetch", url="https://x.com/") == "deny"
    assert decide(res, "web_fetch", url="https://y.com/") == "allow"


def test_cli_workspace_from_a_context_file_and_a_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from policyctl.cli.main import main

    policy = tmp_path / "policy.yaml"
    policy.write_text('tools:\n  deny: ["read(./secrets/)"]\n', encoding="utf-8")
    context = tmp_path / "ctx.yaml"
    context.write_text(f"workspace: {tmp_path / 'ws'}\n", encoding="utf-8")
    call = json.dumps({"path": str(tmp_path / "ws" / "secrets" / "k")})
    base = ["explain", str(policy), "--tool", "read", "--call", call, "--format", "json"]
    assert main([*base, "--context", str(context)]) == 0
    assert json.loads(capsys.readouterr().out)["call"]["decision"] == "deny"
    assert main([*base, "--workspace", str(tmp_path / "other")]) == 0
    assert json.loads(capsys.readouterr().out)["call"]["decision"] == "allow"


def test_cli_call_too_large_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from policyctl.cli.main import main

    policy = tmp_path / "policy.yaml"
    policy.write_text("tools:\n  deny: [browser]\n", encoding="utf-8")
    big = '{"command": "' + "x" * 300_000 + '"}'
    assert main(["explain", str(policy), "--tool", "exec", "--call", big]) == 2
    assert "at most" in capsys.readouterr().err
    assert main(["explain", str(policy), "--tool", "exec", "--call", '{"a": NaN}']) == 2
    assert "NaN" in capsys.readouterr().err


def test_a_policy_without_call_rules_never_loads_the_call_rule_core() -> None:
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from policyctl import load_policy_text, resolve\n"
        "res = resolve(load_policy_text('tools: {deny: [exec], ask: []}\\n'))\n"
        "res.capture(); res.to_json(); assert res.call_layers == ()\n"
        "print('policyctl.callrules' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_has_call_rules_counts_redirections_of_a_shell_tool(make_policy: MakePolicy) -> None:
    # without write in the run, `echo x > f` through exec is refused: exec has call rules
    res = run(make_policy("tools:\n  deny: [write, apply_patch]\n"))
    assert res.call_layers == ()
    assert res.has_call_rules("exec") and not res.has_call_rules("read")
    assert decide(res, "exec", command="echo x > f") == "deny"
    assert decide(res, "exec", command="echo x") == "allow"
    with_write = run(make_policy('tools:\n  deny: ["write(/etc/**)"]\n'))
    assert with_write.has_call_rules("exec")
    assert decide(with_write, "exec", command="echo x > /etc/passwd") == "deny"
    assert decide(with_write, "exec", command="echo x > /tmp/f") == "allow"


@pytest.mark.parametrize(
    ("name", "text", "column"),
    [
        ("policy.toml", "[tools]\ndeny = ['read(!x)']\n", 15),
        ("policy.toml", '[tools]\ndeny = ["read(!x)"]\n', 15),
        ("policy.json", '{"tools":\n {"deny": ["read(!x)"]}}\n', 18),
        ("policy.yaml", "tools:\n  deny:\n    - read(!x)\n", 12),
    ],
)
def test_specifier_errors_point_at_the_character_in_every_format(
    make_policy: MakePolicy, name: str, text: str, column: int
) -> None:
    with pytest.raises(PolicyError) as info:
        make_policy(text, name=name)
    [diag] = [d for d in info.value.diagnostics if d.code == "PC352"]
    assert diag.source is not None and diag.source.column == column


def test_unknown_plain_ask_entries_are_warned_about(make_policy: MakePolicy) -> None:
    res = run(make_policy("tools:\n  ask: [group:fs, exce]\n"))
    [warning] = [w for w in res.warnings if w.code == "PC460"]
    assert "exce" in warning.message and warning.source is not None
    assert warning.source.line == 2
    assert not [
        w for w in run(make_policy("tools:\n  ask: [exec]\n")).warnings if w.code == "PC460"
    ]


def test_a_look_alike_command_word_is_refused_but_paths_may_be_non_ascii(
    make_policy: MakePolicy, tmp_path: Path
) -> None:
    with pytest.raises(PolicyError) as info:
        make_policy('tools:\n  deny: ["exec(r\\u043c *)"]\n')  # a Cyrillic em
    [diag] = [d for d in info.value.diagnostics if d.code == "PC301"]
    assert diag.source is not None and diag.source.column == 17  # the letter itself
    text = 'tools:\n  deny: ["read(./donn\\u00e9es/**)", "exec(git commit -m \\u00e9*)"]\n'
    res = run(make_policy(text), workspace=str(tmp_path))
    assert decide(res, "read", path=str(tmp_path / "donn\u00e9es" / "x")) == "deny"
    assert decide(res, "read", path=str(tmp_path / "donnees" / "x")) == "allow"
    assert decide(res, "exec", command="git commit -m \u00e9t\u00e9") == "deny"
