"""`policyctl import`: an OpenClaw config's policy survives the trip, with its comments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policyctl import RunContext, Sender, load_policy, resolve
from policyctl.catalog.load import builtin_catalog
from policyctl.cli.main import main
from policyctl.cli.validate import validate_file
from policyctl.importers.json5_comments import json5_comments

CONFIG = ROOT / "tests" / "data" / "openclaw-slack-mcp.json5"


@pytest.fixture
def imported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str, str]:
    out = tmp_path / "policy.yaml"
    assert main(["import", str(CONFIG), "-o", str(out)]) == 0
    _, err = capsys.readouterr()
    return out, out.read_text(encoding="utf-8"), err


def _allowed(path: Path, **ctx: object) -> tuple[str, ...]:
    return resolve(load_policy(str(path)), RunContext(**ctx), require_tools=False).allowed  # type: ignore[arg-type]


def test_slack_per_channel_policies_become_groups(imported: tuple[Path, str, str]) -> None:
    path, _, _ = imported
    key = "agent:support:slack:channel:C0SUPPORT"
    member = _allowed(path, agent="support", session_key=key, sender=Sender(id="U9"))
    lead = _allowed(path, agent="support", session_key=key, sender=Sender(id="U0LEAD"))
    assert "write" not in member and "write" in lead  # channel tools, then its toolsBySender


def test_mcp_servers_become_inventory_stubs_that_resolve(imported: tuple[Path, str, str]) -> None:
    path, text, err = imported
    assert "github__search_code" in _allowed(path, agent="support")
    assert "inventory.mcp.linear: no entry names one of its tools" in err
    assert "mcp.servers.old is disabled" in err and "old:" not in text
    for secret in ("gw-secret-1", "xoxb-secret-2", "ghp-secret-3", "github-mcp", "linear.example"):
        assert secret not in text


def test_the_default_agent_governs_runs_that_name_no_agent(
    imported: tuple[Path, str, str],
) -> None:
    path, text, err = imported
    assert _allowed(path) == _allowed(path, agent="support")
    assert _allowed(path) != _allowed(path, agent="ops")
    assert "agents.list[1].default" not in err  # imported, not left out
    assert "support:  # runs that name no agent are support's; the default agent" in text


def test_comments_are_kept_or_reported_by_line(imported: tuple[Path, str, str]) -> None:
    _, text, err = imported
    for comment in (
        "# A support deployment",
        "# nobody edits the gateway config from a chat",
        "# the support channel: no writing tools for anyone but the leads",
        "# code search",
    ):
        assert comment in text
    assert "comment not kept: line 3 (on gateway, which is left out)" in err
    assert "gateway token" not in text + err  # a lost comment's text is never printed


def test_validate_and_resolve_agree_on_the_imported_channel_tool(
    imported: tuple[Path, str, str],
) -> None:
    path, text, err = imported
    assert "- name: slack\n      pluginId: slack" in text
    assert 'declared inventory.plugins "slack"' in err
    res = resolve(load_policy(str(path)), RunContext(agent="support"), require_tools=False)
    assert "slack" in res.allowed
    assert not [w for w in res.warnings if "slack" in w.message]
    assert not [
        d
        for d in validate_file(str(path), strict=False, max_contexts=200)
        if '"slack"' in d.message
    ]


CHANNEL_IDS = sorted(
    n
    for n in builtin_catalog("openclaw").sandbox_deny
    if n not in builtin_catalog("openclaw").tool_ids
)


@pytest.mark.parametrize("name", [*CHANNEL_IDS, "browser", "cron", "image", "message", "bash"])
def test_validate_warns_exactly_when_resolve_does(name: str, tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(f"tools:\n  allow: [read, {name}]\n", encoding="utf-8")
    validate_says = any(
        d.code == "PC410" for d in validate_file(str(path), strict=False, max_contexts=50)
    )
    res = resolve(load_policy(str(path)), RunContext(provider="openai"), require_tools=False)
    resolve_says = any(w.code == "PC401" for w in res.warnings)
    assert validate_says == resolve_says, (name, validate_says, resolve_says)


def test_the_fix_for_a_channel_tool_works(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text("tools:\n  allow: [read, slack]\n", encoding="utf-8")
    (found,) = [d for d in validate_file(str(path), False, 50) if d.code == "PC410"]
    assert found.fix and "inventory: {plugins: [{name: slack, pluginId: slack}]}" in found.fix
    path.write_text(
        "tools:\n  allow: [read, slack]\ninventory: {plugins: [{name: slack, pluginId: slack}]}\n",
        encoding="utf-8",
    )
    assert not [d for d in validate_file(str(path), False, 50) if d.code == "PC410"]
    assert "slack" in _allowed(path)


def test_json5_comment_paths() -> None:
    text = '// head\n{\n  // on a\n  a: [1, // one\n  2],\n  "b": { c: true }, /* on b */\n}\n'
    got = [(c.text, c.path, c.trailing) for c in json5_comments(text)]
    assert got == [
        ("head", (), False),
        ("on a", ("a",), False),
        ("one", ("a", 0), True),
        ("on b", ("b",), True),
    ]


_KEYS = st.sampled_from(
    [
        "tools",
        "agents",
        "list",
        "defaults",
        "channels",
        "slack",
        "groups",
        "accounts",
        "mcp",
        "servers",
        "allow",
        "deny",
        "alsoAllow",
        "toolsBySender",
        "default",
        "id",
        "profile",
        "session",
        "byProvider",
        "sandbox",
        "subagents",
        "enabled",
        "#x",
        "C1",
        "github",
    ]
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(_KEYS, _JSON, max_size=6))
def test_import_never_crashes_and_writes_yaml(config: dict[str, object]) -> None:
    from ruamel.yaml import YAML

    from policyctl.cli.import_cmd import render_yaml
    from policyctl.importers.openclaw import import_openclaw

    result = import_openclaw(config, {"slack"})
    doc = {"catalog": "openclaw", **result.document}
    plain, _ = render_yaml(doc, result, [])
    # a comment after every line and one on a line of its own before it: they may land
    # anywhere sensible, but never change the data
    lines = json.dumps(config, indent=1).splitlines()
    text = "\n".join(f"// above {i}\n{line} // after {i}" for i, line in enumerate(lines))
    commented, _ = render_yaml(doc, result, json5_comments(text))
    safe = YAML(typ="safe")
    assert safe.load(commented) == safe.load(plain)
    assert isinstance(safe.load(plain), dict)


def test_hostile_configs_are_refused_with_a_diagnostic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deep = tmp_path / "deep.json5"
    deep.write_text("{a: " + "[" * 5000 + "]" * 5000 + "}", encoding="utf-8")
    assert main(["import", str(deep)]) == 2
    assert "PC107" in capsys.readouterr().err
    at_limit = tmp_path / "ok.json5"  # as deep as a policy may be: json5 must not overflow
    at_limit.write_text("{a: " + "{b: " * 62 + "1" + "}" * 62 + "}", encoding="utf-8")
    assert main(["import", str(at_limit)]) == 0
    capsys.readouterr()
    utf16 = tmp_path / "utf16.json5"
    utf16.write_bytes("{tools: {}}".encode("utf-16"))
    assert main(["import", str(utf16)]) == 2
    assert "PC102" in capsys.readouterr().err


def test_default_agent_sandbox_mode_that_cannot_follow_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "openclaw.json5"
    config.write_text(
        '{agents: {list: [{id: "a", default: true, sandbox: {mode: "all"}}]}}', encoding="utf-8"
    )
    assert main(["import", str(config)]) == 0
    assert (
        "sandbox mode all: runs that name no agent get agents.defaults" in capsys.readouterr().err
    )


@pytest.mark.parametrize(("enabled", "declared"), [("true", True), ("false", False)])
def test_a_channel_tool_is_declared_only_for_an_enabled_channel(
    enabled: str, declared: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "openclaw.json5"
    config.write_text(
        f'{{tools: {{deny: ["telegram"]}}, channels: {{telegram: {{enabled: {enabled}, '
        'botToken: "123:abc"}}}',
        encoding="utf-8",
    )
    out = tmp_path / "policy.yaml"
    assert main(["import", str(config), "-o", str(out)]) == 0
    capsys.readouterr()
    assert ("pluginId: telegram" in out.read_text(encoding="utf-8")) is declared
    warned = [d for d in validate_file(str(out), False, 50) if '"telegram"' in d.message]
    assert bool(warned) is not declared  # an enabled channel's tool is known, else PC411


def test_a_comment_quoting_a_secret_is_not_copied(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "openclaw.json5"
    config.write_text(
        "{\n"
        '  channels: {slack: {botToken: "zz-9f8e7d6c5b4a", groups: {C1: {tools: {\n'
        '    deny: ["exec"], // rotated: the old one was zz-9f8e7d6c5b4a\n'
        '    allow: ["read"], // from xoxb-1234567890-abc\n'
        "  }}}}},\n"
        '  tools: {deny: ["gateway"]}, // sandboxed sessions never get the gateway\n'
        "}\n",
        encoding="utf-8",
    )
    out = tmp_path / "policy.yaml"
    assert main(["import", str(config), "-o", str(out)]) == 0
    text, err = out.read_text(encoding="utf-8"), capsys.readouterr().err
    assert "zz-9f8e7d6c5b4a" not in text and "xoxb-" not in text
    assert "line 3 (it may quote a left-out value)" in err
    assert "line 4 (it may quote a left-out value)" in err
    assert "# sandboxed sessions never get the gateway" in text


def test_comments_on_empty_list_items_never_change_the_data() -> None:
    """Found by the property above: ruamel writes an end-of-line comment on a null sequence
    item as a nested item; such comments are dropped (and listed), never the data changed."""
    from ruamel.yaml import YAML

    from policyctl.cli.import_cmd import render_yaml
    from policyctl.importers.openclaw import import_openclaw

    config = {"tools": {"tools": None, "agents": None, "profile": [{}, None, None]}}
    result = import_openclaw(config, {"slack"})
    doc = {"catalog": "openclaw", **result.document}
    lines = json.dumps(config, indent=1).splitlines()
    text = "\n".join(f"// above {i}\n{line} // after {i}" for i, line in enumerate(lines))
    commented, lost = render_yaml(doc, result, json5_comments(text))
    assert YAML(typ="safe").load(commented) == doc
    assert lost and len(lost) == len(set(lost))
