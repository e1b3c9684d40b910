"""The policy's `commands` key (operator command models) and validate's PC490 warning."""

from __future__ import annotations

import textwrap
from pathlib import Path

from policyctl import RunContext, load_policy_text, resolve
from policyctl.analysis.validate import validate_path


def _verdict(policy: str, command: str) -> str:
    r = resolve(load_policy_text(textwrap.dedent(policy)), RunContext(provider="openai"))
    return str(r.decide_call("exec", {"command": command}).verdict.effect.label)


OPERATOR_MODEL = """
    tools:
      allow: ["exec(mytool *)", "exec(cargo *)"]
      ask: ["exec(cargo publish *)"]
      deny: ["exec(rm *)"]
    commands:
      mytool:
        valued: ["--profile"]
        payload: command
      cargo:
        flags: ["--locked", "--offline", "-q", "--quiet", "-v"]
        valued: ["--color", "-Z", "--config", "-C"]
        payload: subcommand
"""


def test_an_operator_model_makes_a_payload_and_a_subcommand_visible() -> None:
    assert _verdict(OPERATOR_MODEL, "mytool --profile p rm -rf x") == "deny"
    assert _verdict(OPERATOR_MODEL, "mytool --profile p ls") == "deny"  # ls is not allowed
    assert _verdict(OPERATOR_MODEL, "cargo --locked -q publish") == "ask"
    assert _verdict(OPERATOR_MODEL, "cargo --locked build") == "allow"
    assert _verdict(OPERATOR_MODEL, "cargo --unknown publish") == "deny"  # fails closed
    without = OPERATOR_MODEL.split("    commands:")[0]
    assert _verdict(without, "cargo --locked publish") == "allow"  # the bypass it closes


def test_a_bad_model_is_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("commands:\n  x:\n    payload: nonsense\n", encoding="utf-8")
    found = validate_path(str(path))
    assert [(d.code, d.source.line, d.source.column) for d in found if d.source] == [
        ("PC203", 3, 14)
    ]


def test_a_subcommand_of_an_unmodelled_command_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        'tools:\n  allow: [exec]\n  ask: ["exec(cargo publish *)", "exec(git push *)",'
        ' "exec(rm -rf *)"]\n',
        encoding="utf-8",
    )
    found = [d for d in validate_path(str(path)) if d.code == "PC490"]
    assert len(found) == 1 and "cargo" in found[0].message and found[0].fix
    assert found[0].source is not None and (found[0].source.line, found[0].source.column) == (3, 9)
    path.write_text(path.read_text() + "commands:\n  cargo: {payload: subcommand}\n")
    assert not [d for d in validate_path(str(path)) if d.code == "PC490"]  # modelled now


EXPLAINED = """
    tools:
      allow: ["exec(git *)", read, write]
      ask: ["exec(git push *)"]
      deny: ["exec(rm *)", "read(.env)"]
"""


def test_explain_shows_how_the_line_was_understood() -> None:
    from policyctl.explain.call import explain_call

    res = resolve(load_policy_text(textwrap.dedent(EXPLAINED)), RunContext(workspace="/tmp"))
    line = "git -C . --no-pager push origin main; cat .env; git clone -u 'rm x' a b; eval x"
    explained = explain_call(res, "exec", {"command": line})
    text = explained.render()
    assert "    command: git push origin main\n      as written: git -C . --no-pager push" in text
    assert "model: commands/commands.toml:" in text
    assert 'decided: ask (ask rule "exec(git push *)" at tools.ask)' in text
    assert "    reads: .env (model: commands/commands.toml:" in text
    assert 'decided with read: deny (deny rule "read(.env)" at tools.deny)' in text
    assert "    not analysable: eval runs a string as a command" in text
    understood = explained.to_json()["understood"]
    assert isinstance(understood, dict)
    rm = [c for c in understood["commands"] if c["words"] == ["rm", "x"]]
    assert rm and rm[0]["decidedBy"]["decision"] == "deny"
    push = understood["commands"][0]
    assert push["written"][:3] == ["git", "-C", "."] and push["model"].startswith("commands/")


GIT_IDIOM = """
    tools:
      allow: ["exec(git *)", "exec(echo *)"]
      ask: ["exec(git push *)"]
      deny: ["exec(rm *)", "write(.git/)"]
"""


def test_a_git_setting_written_to_configuration_is_decided_as_what_it_runs() -> None:
    # git runs a written setting in every later git command, this call's or another's
    assert _verdict(GIT_IDIOM, "git config alias.zz '!rm x'") == "deny"
    assert _verdict(GIT_IDIOM, "git config --global alias.p push") == "ask"
    assert _verdict(GIT_IDIOM, "git config -f x.cfg core.pager 'rm -rf /'") == "deny"
    assert _verdict(GIT_IDIOM, "git config user.name 'A B'") == "allow"  # a safe setting
    assert _verdict(GIT_IDIOM, "git config --get alias.zz") == "allow"  # a read
    assert _verdict(GIT_IDIOM, "git config get alias.zz") == "allow"
    assert _verdict(GIT_IDIOM, "git config frob.x y") == "deny"  # may run code: callDefault
    # a safe section renamed to `alias` runs what it held
    assert _verdict(GIT_IDIOM, "git config --rename-section user alias") == "deny"
    assert _verdict(GIT_IDIOM, "git config rename-section user alias") == "deny"
    # the configuration file written directly is a write: the write rules decide it
    assert _verdict(GIT_IDIOM, "echo '[alias] zz = !rm x' >> .git/config") == "deny"
