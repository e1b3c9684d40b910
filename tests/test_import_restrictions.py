"""`policyctl import` (OpenClaw) never comes out looser than its source: a repeated agent id
and an exec restriction policyctl cannot say are errors with their file:line:col (exit 1,
nothing written); `tools.exec.security: deny` becomes `deny: [exec]`; every left-out setting
is reported with its location."""

from __future__ import annotations

from pathlib import Path

import pytest

from policyctl import RunContext, load_policy, resolve
from policyctl.cli.main import main


def _import(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> tuple[int, Path, str]:
    src = tmp_path / "openclaw.json"
    src.write_text(text, encoding="utf-8")
    out = tmp_path / "out.yaml"
    rc = main(["import", str(src), "-o", str(out)])
    return rc, out, capsys.readouterr().err


def _allowed(path: Path, agent: str | None = None) -> tuple[str, ...]:
    ctx = RunContext(provider="openai", agent=agent)
    return resolve(load_policy(str(path)), ctx, require_tools=False).allowed


def test_a_repeated_agent_id_is_an_error_naming_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, err = _import(
        tmp_path,
        capsys,
        "{\n  agents: { list: [\n"
        '    { id: "main", default: true, tools: { deny: ["write"] } },\n'
        '    { id: "main", tools: {} },\n  ] },\n}\n',
    )
    assert rc == 1 and not out.exists()
    src = tmp_path / "openclaw.json"
    assert f"{src}:4:5: error PC323:" in err
    assert f"(also at {src}:3:5)" in err
    assert "Traceback" not in err


def test_exec_security_deny_becomes_a_deny_wherever_it_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, err = _import(
        tmp_path,
        capsys,
        "{\n  // exec is disabled on this gateway\n"
        '  tools: { profile: "coding", exec: { security: "deny", ask: "always" },'
        ' deny: ["browser"] },\n'
        '  agents: { list: [ { id: "ops", tools: { exec: { security: "deny" } } } ] },\n}\n',
    )
    assert rc == 0, err
    assert "exec" not in _allowed(out)
    assert "exec" not in _allowed(out, agent="ops")
    assert "browser" not in _allowed(out)  # the deny written after `exec` is kept too
    assert "PC325" in err


@pytest.mark.parametrize(
    "setting",
    ['security: "allowlist"', 'ask: "always"', 'ask: "on-miss"', 'safeBins: ["ls"]'],
)
def test_an_exec_restriction_that_cannot_be_translated_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], setting: str
) -> None:
    rc, out, err = _import(
        tmp_path,
        capsys,
        f'{{\n  tools: {{\n    profile: "coding",\n    exec: {{ {setting} }},\n  }},\n}}\n',
    )
    assert rc == 1 and not out.exists()
    assert f"{tmp_path / 'openclaw.json'}:4:13: error PC324:" in err


def test_settings_that_restrict_nothing_are_left_out_with_their_location(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, _, err = _import(
        tmp_path,
        capsys,
        '{\n  gateway: { port: 1 },\n  tools: { exec: { security: "full", ask: "off" } },\n}\n',
    )
    assert rc == 0, err
    src = tmp_path / "openclaw.json"
    assert f"{src}:2:3: left out (PC326): gateway" in err
    assert f"{src}:3:20: left out (PC326): tools.exec.security" in err
    assert f"{src}:3:38: left out (PC326): tools.exec.ask" in err


def test_a_key_written_twice_in_one_object_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The JSON5 parser keeps the later value: the earlier `deny` would vanish unseen."""
    rc, out, err = _import(
        tmp_path, capsys, '{\n  tools: { deny: ["exec"] },\n  tools: { profile: "full" },\n}\n'
    )
    src = tmp_path / "openclaw.json"
    assert rc == 1 and not out.exists()
    assert f"{src}:3:3: error PC323: tools is written twice" in err
    assert f"(also at {src}:2:3)" in err


def test_a_slack_channel_under_channels_and_groups_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, err = _import(
        tmp_path,
        capsys,
        "{\n  channels: { slack: {\n"
        '    groups: { C1: { tools: { deny: ["exec"] } } },\n'
        "    channels: { C1: { tools: {} } },\n  } },\n}\n",
    )
    src = tmp_path / "openclaw.json"
    assert rc == 1 and not out.exists()
    assert f"{src}:4:17: error PC323:" in err and f"(also at {src}:3:15)" in err
