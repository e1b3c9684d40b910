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
