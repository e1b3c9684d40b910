"""validate's semantic checks, beyond the one-file-per-code broken set."""

from __future__ import annotations

from conftest import MakePolicy

from policyctl.checks import check_policy


def codes(policy_text: str, make_policy: MakePolicy, **kw: object) -> list[tuple[str, str]]:
    return [(d.code, d.path) for d in check_policy(make_policy(policy_text), **kw)]  # type: ignore[arg-type]


def test_deny_after_a_global_allow_that_already_excludes_it(make_policy: MakePolicy) -> None:
    found = codes(
        "tools:\n  allow: [read, write]\nagents:\n  entries:\n"
        "    a: {tools: {deny: [exec, apply_patch, read]}}\n",
        make_policy,
    )
    assert ("PC413", "agents.entries.a.tools.deny[0]") in found  # exec: not in tools.allow
    assert all(
        path != "agents.entries.a.tools.deny[1]" for _, path in found
    )  # write grants apply_patch
    assert all(path != "agents.entries.a.tools.deny[2]" for _, path in found)  # read is allowed


def test_write_deny_is_fine_when_apply_patch_is_denied_too(make_policy: MakePolicy) -> None:
    assert ("PC404", "tools.deny[0]") in codes("tools:\n  deny: [write]\n", make_policy)
    assert not [
        c for c, _ in codes("tools:\n  deny: [write, apply_patch]\n", make_policy) if c == "PC404"
    ]
    agent = "tools:\n  deny: [apply_patch]\nagents:\n  entries:\n    a: {tools: {deny: [write]}}\n"
    assert not [c for c, _ in codes(agent, make_policy) if c == "PC404"]


def test_unknown_names_warn_and_strict_makes_them_errors(make_policy: MakePolicy) -> None:
    policy = make_policy(
        "tools:\n  allow: [read, reed, 'github__*']\n  deny: [exce]\n"
        "inventory:\n  mcp:\n    github: {tools: [x]}\n"
    )
    found = {(d.code, d.severity.value, d.fix) for d in check_policy(policy)}
    assert ("PC410", "warning", 'did you mean "read"?') in found
    assert ("PC411", "warning", 'did you mean "exec"?') in found
    assert all(
        code not in ("PC410", "PC411") or sev == "error"
        for code, sev, _ in {
            (d.code, d.severity.value, d.fix) for d in check_policy(policy, strict=True)
        }
    )
    # a declared MCP server makes its glob known
    assert not [d for d in check_policy(policy) if "github__*" in d.message]


def test_empty_context_is_found_and_sampling_is_reported(make_policy: MakePolicy) -> None:
    text = "agents:\n  entries:\n" + "".join(
        f"    a{i}: {{tools: {{allow: [nothing_{i}]}}}}\n" for i in range(3)
    )
    found = codes(text, make_policy)
    assert [c for c, _ in found].count("PC308") == 3
    sampled = codes(text, make_policy, max_contexts=2)
    assert ("PC415", "") in sampled
