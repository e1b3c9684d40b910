"""A new operator's policy with every mistake of issue 12 at once.

One `validate` run reports each mistake, located, with a fix. The fixed file applies those
fixes as written; validating it again reports none of them, and the intended result holds.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from conftest import ctx

from policyctl import load_policy, resolve
from policyctl.analysis.validate import validate_path

MISTAKES = """\
tools:
  deny: [exec, "group:secretz"]
  toolsBySender:
    "idd:42": {deny: [message]}
agents:
  entries:
    coder:
      tools:
        allow: [read, write, exec, "github_*"]
    support:
      tools:
        profile: messaging
        allow: [message, read, web_search]
        toolsBySender:
          "id:7": {alsoAllow: [browser]}
channels:
  slack:
    groups:
      C0SUPPORT:
        tools: {deny: [write, edit, apply_patch, "github__*"]}
        toolsBySender:
          "*": {deny: [web_fetch]}
inventory:
  mcp:
    github: {tools: [create_issue, list_pull_requests]}
"""

# each fix applied as the diagnostic says
FIXED = """\
tools:
  deny: [canvas]
  toolsBySender:
    "id:42": {deny: [message]}
agents:
  entries:
    coder:
      tools:
        allow: [read, write, exec, "github__*"]
    support:
      tools:
        allow: [message, read, web_search, browser]
        toolsBySender:
          "id:7": {alsoAllow: [browser]}
          "*": {deny: [browser]}
channels:
  slack:
    groups:
      C0SUPPORT:
        tools: {deny: [write, edit, apply_patch, "github__*"]}
        toolsBySender:
          "*": {deny: [web_fetch, write, edit, apply_patch, "github__*"]}
inventory:
  mcp:
    github: {tools: [create_issue, list_pull_requests]}
"""

MISTAKE_CODES = {"PC320", "PC321", "PC430", "PC431", "PC432"}


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return str(path)


def test_every_mistake_is_reported_in_one_run_with_a_fix(tmp_path: Path) -> None:
    diags = validate_path(_write(tmp_path, "policy.yaml", MISTAKES))
    by_code: dict[str, list[str]] = {}
    for d in diags:
        assert d.source is not None, d  # located
        by_code.setdefault(d.code, []).append(f"{d.source.line}: {d.fix}")
    assert set(by_code) >= MISTAKE_CODES, by_code
    assert by_code["PC321"] == ['4: write "id:42"']
    assert by_code["PC320"] == ["2: name the tools, or a group listed above"]
    assert by_code["PC431"] == ['9: write "github__*" to allow only the MCP server\'s tools']
    assert any(fix.startswith('9: remove "exec" from tools.deny') for fix in by_code["PC432"])
    assert any("remove agents.entries.support.tools.profile" in f for f in by_code["PC432"])
    assert any(f.startswith("15: ") for f in by_code["PC432"])  # the sender's alsoAllow
    assert by_code["PC430"][0].startswith(
        '22: add "write", "edit", "apply_patch", "github__*" to '
        'channels.slack.groups.C0SUPPORT.toolsBySender["*"].deny'
    )


def test_the_fixed_policy_is_clean_and_does_what_was_meant(tmp_path: Path) -> None:
    path = _write(tmp_path, "policy.yaml", FIXED)
    diags = validate_path(path)
    assert not [str(d) for d in diags if d.code in MISTAKE_CODES]
    policy = load_policy(path)
    coder = resolve(policy, ctx(agent="coder"))
    assert "exec" in coder.allowed and "github__create_issue" in coder.allowed
    assert "github_publish" not in coder.allowed
    support = resolve(policy, ctx(agent="support", sender={"id": "7"}))
    assert {"message", "read", "web_search", "browser"} <= set(support.allowed)
    other = resolve(policy, ctx(agent="support", sender={"id": "8"}))
    assert "browser" not in other.allowed
    group = resolve(
        policy,
        ctx(agent="coder", session_key="agent:coder:slack:group:C0SUPPORT", sender={"id": "9"}),
    )
    assert not {"write", "edit", "apply_patch", "github__create_issue"} & set(group.allowed)
    assert "message" not in resolve(policy, ctx(sender={"id": "42"})).allowed
