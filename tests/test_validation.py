"""validate reports every problem of a file in one run, and recognises test files and bundles."""

from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path

import pytest
from conftest import EXAMPLES, ROOT

from policyctl.analysis.validate import parse_path, validate_path


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return str(path)


def codes(path: str, **kw: object) -> list[tuple[str, int]]:
    return [
        (d.code, d.source.line if d.source else 0)
        for d in validate_path(path, **kw)  # type: ignore[arg-type]
    ]


EVERY_STAGE = """\
tools:
  profile: messagin
  allow: [read, 5]
  denny: [exec]
  alsoAllow: [write]
  toolsBySender:
    "idd:42": {deny: [exec]}
agents:
  entries:
    a:
      tools:
        deny: ["group:nope", reed]
"""


def test_schema_compile_and_semantic_problems_in_one_run(tmp_path: Path) -> None:
    found = codes(write(tmp_path, "p.yaml", EVERY_STAGE))
    # schema (PC202, PC201), compile (PC302, PC303, PC321) and semantic checks (PC320, PC411)
    for expected in [
        ("PC302", 2),
        ("PC202", 3),
        ("PC201", 4),
        ("PC303", 5),
        ("PC321", 7),
        ("PC320", 12),
        ("PC411", 12),
    ]:
        assert expected in found, found


def test_compile_errors_of_any_code_are_reported_with_schema_errors(tmp_path: Path) -> None:
    text = "tools:\n  denny: [x]\nagents:\n  entries:\n    '': {}\n    a: {tools: {deny: [reed]}}\n"
    found = codes(write(tmp_path, "p.yaml", text))
    # PC203 here comes from compile (an empty agent id), not from the schema
    assert ("PC201", 2) in found and ("PC203", 5) in found and ("PC411", 6) in found


def test_every_duplicate_key_is_reported(tmp_path: Path) -> None:
    yaml = (
        "tools:\n  deny: [exec]\n  deny: [write]\n  allow: [read]\n  allow: [x]\n"
        "agents: {}\nagents: {}\n"
    )
    assert codes(write(tmp_path, "d.yaml", yaml)) == [("PC104", 3), ("PC104", 5), ("PC104", 7)]
    json = '{"tools": {"deny": ["exec"],\n "deny": [],\n "allow": [],\n "allow": [1]}}'
    assert codes(write(tmp_path, "d.json", json)) == [("PC104", 2), ("PC104", 4)]


def test_duplicate_keys_do_not_hide_schema_and_semantic_problems(tmp_path: Path) -> None:
    from policyctl import load_policy
    from policyctl.diagnostics import PolicyError

    yaml = "tools:\n  deny: [exec]\n  deny: [write]\n  denny: [x]\n  allow: ['group:nope', exec]\n"
    path = write(tmp_path, "d.yaml", yaml)
    # schema (PC201), compile (PC320) and semantic checks (PC308, PC412) all report
    assert sorted(codes(path)) == [
        ("PC104", 3),
        ("PC201", 4),
        ("PC308", 5),
        ("PC320", 5),
        ("PC412", 5),
    ]
    # a policy with a duplicate key is still refused where it is used
    with pytest.raises(PolicyError) as err:
        load_policy(path)
    assert [d.code for d in err.value.diagnostics] == ["PC104"]


def test_a_bad_list_item_does_not_hide_the_rest_of_the_list(tmp_path: Path) -> None:
    # the sound entries of a list with a bad item are still checked
    found = codes(write(tmp_path, "p.yaml", "tools:\n  deny: [7, 'group:nope']\n"))
    assert ("PC202", 2) in found and ("PC320", 2) in found


def test_parse_path_inverts_format_path() -> None:
    from policyctl.located import format_path

    path = ("tools", "toolsBySender", "id:x", "deny", 2)
    assert parse_path(format_path(path)) == path
    assert parse_path('agents.entries.a-b.tools.byProvider["openai/gpt-5"]') == (
        "agents",
        "entries",
        "a-b",
        "tools",
        "byProvider",
        "openai/gpt-5",
    )


def test_a_test_file_is_validated_as_a_test_file(tmp_path: Path) -> None:
    diags = validate_path(str(EXAMPLES / "team.test.yaml"))
    assert [d.code for d in diags] == ["PC433"]
    assert diags[0].severity.value == "info" and "policyctl test" in (diags[0].fix or "")
    bad = write(
        tmp_path,
        "x.test.yaml",
        f"""\
        policy: {EXAMPLES / "team.yaml"}
        invariants:
          - never:
              tools: [gateway]
              unless: {{ownr: true}}
        """,
    )
    diags = validate_path(bad)
    # the message is about the condition, not "unknown key never" from the other invariant kind
    assert [(d.code, d.message) for d in diags if d.code != "PC433"] == [
        ("PC201", 'unknown key "ownr" in invariants[0].never.unless')
    ]
    assert [d.fix for d in diags if d.code == "PC201"] == ['did you mean "owner"?']


def test_a_test_file_is_recognised_by_its_content(tmp_path: Path) -> None:
    shutil.copy(EXAMPLES / "team.yaml", tmp_path / "team.yaml")
    path = write(tmp_path, "checks.yaml", "policy: team.yaml\ncases: []\n")
    (d,) = validate_path(path)
    # named like a policy: refused (as the runtime would), with the name it should have
    assert d.code == "PC435" and d.severity.value == "error"
    assert d.fix is not None and d.fix.startswith("rename it to checks.test.yaml and run")
    assert d.fix.endswith(f"`policyctl test {tmp_path / 'checks.test.yaml'}`")
    missing = write(tmp_path, "gone.test.yaml", "policy: nowhere.yaml\ncases: []\n")
    assert [d.code for d in validate_path(missing)] == ["PC433", "PC101"]


def test_a_bundle_is_verified_and_checked(tmp_path: Path) -> None:
    bundle = ROOT / "tests" / "data" / "tiny.bundle.json"
    diags = validate_path(str(bundle))
    assert diags[0].code == "PC434"
    assert not [d for d in diags if d.code == "PC201"]
    assert {"PC410", "PC411"} <= {d.code for d in diags}  # the held policy's own findings
    tampered = tmp_path / "t.bundle.json"
    tampered.write_text(bundle.read_text(encoding="utf-8").replace("grepp", "grep"), "utf-8")
    assert [d.code for d in validate_path(str(tampered))] == ["PC416"]


@pytest.mark.parametrize(
    ("name", "validated"),
    [
        ("policies/team.yaml", True),
        ("policies/platform.toml", True),
        ("policies/team.test.yaml", False),
        ("policies/platform.test.toml", False),
        ("build/team.bundle.json", False),
    ],
)
def test_pre_commit_hook_pattern(name: str, validated: bool) -> None:
    from ruamel.yaml import YAML

    hooks = YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    hook = next(h for h in hooks if h["id"] == "policyctl-validate")
    # pre-commit matches `files` and `exclude` with re.search
    matched = re.search(hook["files"], name) and not re.search(hook.get("exclude", "^$"), name)
    assert bool(matched) is validated
