"""`policyctl fmt`: TOML is checked and left as written; `--migrate` keeps every comment."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EXAMPLES

from policyctl import RunContext, load_policy, resolve
from policyctl.cli.main import main
from policyctl.formats.fmt import format_text

LEGACY = """\
# top comment
agents:
  # the roster
  list:
    # the coder, first
    - id: coder   # the coding agent
      # its tools
      tools:
        deny: [exec]   # never exec
    - id: docs
      name: Docs     # docs writer
tools:
  deny: [gateway]  # keep
"""


def test_migrate_keeps_every_comment(tmp_path: Path) -> None:
    out = format_text(LEGACY, "policy.yaml", migrate=True)
    for comment in (
        "# top comment",
        "# the roster",
        "# the coder, first",
        "# the coding agent",
        "# its tools",
        "# never exec",
        "# docs writer",
        "# keep",
    ):
        assert comment in out, f"{comment!r} lost:\n{out}"
    assert "list:" not in out and "entries:" in out
    assert out.index("# the coder, first") < out.index("coder:") < out.index("# the coding agent")
    path = tmp_path / "policy.yaml"
    path.write_text(out, encoding="utf-8")
    original = tmp_path / "legacy.yaml"
    original.write_text(LEGACY, encoding="utf-8")
    for agent in ("coder", "docs"):
        ctx = RunContext(agent=agent)
        before = resolve(load_policy(str(original)), ctx, require_tools=False)
        assert resolve(load_policy(str(path)), ctx, require_tools=False).allowed == before.allowed


def test_fmt_check_on_toml_exits_0_with_a_note(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["fmt", "--check", str(EXAMPLES / "platform.toml"), str(EXAMPLES / "team.yaml")])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "platform.toml: left as written" in out and "1 file already formatted" in out
    assert "PC110" not in out + err  # PC110 means an unsupported YAML construct


def test_fmt_on_broken_toml_still_reports_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "broken.toml"
    path.write_text("catalog = \n", encoding="utf-8")
    assert main(["fmt", "--check", str(path)]) == 2
    assert "PC103" in capsys.readouterr().err


def test_fmt_migrate_on_legacy_toml_says_it_must_be_done_by_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "legacy.toml"
    text = '[[agents.list]]\nid = "coder"\n'
    path.write_text(text, encoding="utf-8")
    assert main(["fmt", "--migrate", str(path)]) == 1
    assert "[agents.entries.<id>]" in capsys.readouterr().err
    assert path.read_text(encoding="utf-8") == text


@pytest.mark.parametrize("suffix", ["yaml", "json"])
def test_migrate_refuses_what_it_cannot_migrate_with_every_location(
    suffix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the second "a" would silently replace the first, and the nameless item has no key
    text = (
        '{"agents": {"list": [{"id": "a"}, {"id": "a", "tools": {"deny": ["exec"]}}, '
        '{"name": "x"}]}}\n'
    )
    path = tmp_path / f"policy.{suffix}"
    path.write_text(text, encoding="utf-8")
    assert main(["fmt", "--migrate", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"policy.{suffix}:1:" in err and "PC306" in err and "PC204" in err
    assert path.read_text(encoding="utf-8") == text


GROUPS = "tools:\n  profile: coding\nchannels:\n  telegram:\n    groups:\n"


@pytest.mark.parametrize(
    ("keys", "where"),
    [
        (["~"], "6:7"),
        (["Null", "NULL"], "7:7"),
        (["1_000", "1e3"], "7:7"),
    ],
)
def test_fmt_never_changes_a_key_it_cannot_keep(
    keys: list[str], where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """F25: `~:` became `null:` (group "~" lost its deny); `Null`/`NULL` crashed fmt."""
    text = GROUPS + "".join(f"      {k}: {{tools: {{deny: [exec]}}}}\n" for k in keys)
    path = tmp_path / "g.yaml"
    path.write_text(text, encoding="utf-8")
    for argv in (["fmt", str(path)], ["fmt", "--check", str(path)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"g.yaml:{where}: PC437" in err and "Traceback" not in err
    assert path.read_text(encoding="utf-8") == text


@pytest.mark.parametrize("key", ["null", "1_000", "1e3", "-100123", "yes", '"~"'])
def test_fmt_keeps_keys_the_writer_round_trips(key: str) -> None:
    text = GROUPS + f"      {key}: {{tools: {{deny: [exec]}}}}\n"
    assert format_text(text, "g.yaml") == text
