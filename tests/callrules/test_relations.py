"""Relations between tools are catalog data and carry every rule (`[[relations]]`).

`apply_patch` comes with `write` and writes each file it touches: all of write's call rules
(allow, ask, deny, at every layer) decide each file, per operation, the strictest answer over
the files winning. A patch's update reveals the file like a read; `skills_read` and `edit` read
the file they name. Each row of CASES failed before relations existed (apply_patch took write's
allow rules only, skills_read and edit none of read's rules).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import pytest
from test_call_layers import LAYERS, SKELETON, _base

from policyctl import PolicyError, RunContext, load_policy, load_policy_text, resolve
from policyctl.callrules.patch import patch_operations
from policyctl.catalog.load import (
    builtin_catalog,
    catalog_from_definition,
    load_catalog,
    relation_problem,
)
from policyctl.explain.call import explain_call

WS = "/ws"


def patch(*ops: str) -> str:
    """`patch("add src/a", "update b", "delete c", "move d e")` in the apply_patch envelope."""
    lines = ["*** Begin Patch"]
    for op in ops:
        verb, path, *rest = op.split()
        if verb == "add":
            lines += [f"*** Add File: {path}", "+x"]
        elif verb == "update":
            lines += [f"*** Update File: {path}", "@@", "-x", "+y"]
        elif verb == "delete":
            lines += [f"*** Delete File: {path}"]
        elif verb == "move":
            lines += [f"*** Update File: {path}", f"*** Move to: {rest[0]}", "@@", "-x", "+y"]
    return "\n".join([*lines, "*** End Patch", ""])


class Case(NamedTuple):
    policy: str
    tool: str
    args: dict[str, Any]
    expect: str
    #: the deciding verdict's tool, entry and subject (None: not checked)
    by: tuple[str, str, str] | None = None


DENY_ENV = 'tools:\n  deny: ["write(.env)"]\n'
SRC_ONLY = 'tools:\n  allow: ["write(./src/**)"]\n  deny: ["write(.env)"]\n'
ASK_SRC = 'tools:\n  ask: ["write(./src/**)"]\n'
DENY_SECRET_READ = 'tools:\n  deny: ["read(./secret.txt)", "read(~/.ssh/**)"]\n'

CASES = {
    # the held-out examples: write's deny and ask rules decide apply_patch too
    "deny meets an added file": Case(
        DENY_ENV,
        "apply_patch",
        {"input": patch("add src/.env")},
        "deny",
        ("write", "write(.env)", "/ws/src/.env"),
    ),
    "allow rules do not lift a deny": Case(
        SRC_ONLY,
        "apply_patch",
        {"input": patch("add src/.env")},
        "deny",
        ("write", "write(.env)", "/ws/src/.env"),
    ),
    "allow admits a file inside": Case(
        SRC_ONLY,
        "apply_patch",
        {"input": patch("add src/a.py")},
        "allow",
        ("write", "write(./src/**)", "/ws/src/a.py"),
    ),
    "a file outside the allow gets callDefault": Case(
        SRC_ONLY,
        "apply_patch",
        {"input": patch("add src/a.py", "add docs/b.md")},
        "deny",
        ("write", "callDefault", "/ws/docs/b.md"),
    ),
    "the strictest file wins": Case(
        SRC_ONLY,
        "apply_patch",
        {"input": patch("update src/a.py", "add src/.env", "add src/b.py")},
        "deny",
        ("write", "write(.env)", "/ws/src/.env"),
    ),
    "ask meets a patched file": Case(
        ASK_SRC, "apply_patch", {"input": patch("update src/a.py")}, "ask"
    ),
    "a move writes its source": Case(
        'tools:\n  deny: ["write(./keep/**)"]\n',
        "apply_patch",
        {"input": patch("move keep/a.py src/a.py")},
        "deny",
        ("write", "write(./keep/**)", "/ws/keep/a.py"),
    ),
    "a delete is a write": Case(
        'tools:\n  deny: ["write(./keep/**)"]\n',
        "apply_patch",
        {"input": patch("delete keep/a.py")},
        "deny",
    ),
    "a unified diff is decided per file": Case(
        DENY_ENV,
        "apply_patch",
        {"input": "--- a/src/.env\n+++ b/src/.env\n@@ -1 +1 @@\n-x\n+y\n"},
        "deny",
    ),
    "an unreadable patch meets write's callDefault": Case(
        SRC_ONLY, "apply_patch", {"input": "no patch here"}, "deny"
    ),
    # an update reveals the file's text (a failed context match names it): a read
    "a patch's update reads the file": Case(
        DENY_SECRET_READ,
        "apply_patch",
        {"input": patch("update secret.txt")},
        "deny",
        ("read", "read(./secret.txt)", "/ws/secret.txt"),
    ),
    "a patch's add reads nothing": Case(
        DENY_SECRET_READ, "apply_patch", {"input": patch("add secret.txt")}, "allow"
    ),
    # the granted tool's own rules still decide, strictest wins
    "the patch tool's own deny": Case(
        'tools:\n  deny: ["apply_patch(./gen/**)"]\n  allow: ["write(./**)"]\n',
        "apply_patch",
        {"input": patch("add gen/x")},
        "deny",
        ("apply_patch", "apply_patch(./gen/**)", "/ws/gen/x"),
    ),
    "the patch tool's own allow does not lift write's deny": Case(
        'tools:\n  allow: ["apply_patch(./src/**)"]\n  deny: ["write(.env)"]\n',
        "apply_patch",
        {"input": patch("add src/.env")},
        "deny",
        ("write", "write(.env)", "/ws/src/.env"),
    ),
    "an allow of the patch tool by name does not lift write's callDefault": Case(
        'tools:\n  allow: ["write(./src/**)", apply_patch]\n',
        "apply_patch",
        {"input": patch("add etc/x")},
        "deny",
    ),
    # write not in the run: every patch refused, as a redirection to a file would be
    "write denied by name": Case(
        "tools:\n  deny: [write]\n",
        "apply_patch",
        {"input": patch("add src/a.py")},
        "deny",
        ("write", "", "/ws/src/a.py"),
    ),
    # skills_read and edit read the file they name
    "skills_read meets read's deny": Case(
        DENY_SECRET_READ,
        "skills_read",
        {"path": "~/.ssh/id_ed25519"},
        "deny",
        ("read", "read(~/.ssh/**)", "/home/u/.ssh/id_ed25519"),
    ),
    "skills_read meets read's allow": Case(
        'tools:\n  allow: ["read(./skills/**)", skills_read]\n',
        "skills_read",
        {"path": "skills/x/SKILL.md"},
        "allow",
    ),
    "skills_read outside read's allow": Case(
        'tools:\n  allow: ["read(./skills/**)", skills_read]\n',
        "skills_read",
        {"path": "notes/x.md"},
        "deny",
    ),
    "edit reads the file it edits": Case(
        DENY_SECRET_READ,
        "edit",
        {"path": "secret.txt", "oldText": "a", "newText": "b"},
        "deny",
        ("read", "read(./secret.txt)", "/ws/secret.txt"),
    ),
    "edit of another file": Case(
        DENY_SECRET_READ, "edit", {"path": "notes.txt", "oldText": "a", "newText": "b"}, "allow"
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_relations_carry_every_rule(name: str) -> None:
    case = CASES[name]
    res = resolve(
        load_policy_text(case.policy),
        RunContext(provider="openai", workspace=WS, home="/home/u"),
    )
    assert case.tool in res.allowed
    decision = res.decide_call(case.tool, case.args)
    assert decision.effect.label == case.expect, decision.verdict
    if case.by is not None:
        tool, entry, subject = case.by
        verdict = decision.verdict
        assert (verdict.tool, verdict.entry or "", verdict.subject) == (tool, entry, subject)


@pytest.mark.parametrize("layer", LAYERS)
def test_a_write_rule_decides_a_patch_at_every_layer(layer: str) -> None:
    """global, provider, agent, agent provider, group, sender, sandbox, subagent layers."""
    fields = {name: ('"write(.env)"' if name == layer else "browser") for name in LAYERS}
    res = resolve(load_policy_text(SKELETON.format(**fields)), _base())
    assert "apply_patch" in res.allowed
    decision = res.decide_call("apply_patch", {"input": patch("add /ws/src/.env")})
    assert decision.effect.label == "deny"
    assert decision.verdict.entry == "write(.env)"


def test_a_child_cannot_patch_what_its_parent_could_not_write() -> None:
    parent = resolve(
        load_policy_text('tools:\n  deny: ["write(.env)"]\n'), RunContext(provider="openai")
    )
    child_ctx = RunContext(
        provider="openai", session_key="agent:main:subagent:c1", parent=parent.capture()
    )
    child = resolve(load_policy_text("tools:\n  profile: coding\n"), child_ctx)
    decision = child.decide_call("apply_patch", {"input": patch("add /ws/.env")})
    assert decision.effect.label == "deny"
    assert decision.verdict.layer == "inherited tools"


def test_explain_names_the_tool_rule_and_file() -> None:
    res = resolve(load_policy_text(SRC_ONLY), RunContext(provider="openai", workspace=WS))
    text = explain_call(
        res, "apply_patch", {"input": patch("add src/a.py", "add src/.env")}
    ).render()
    assert '"write(.env)" (rules of write)' in text
    assert "decided on: /ws/src/.env" in text
    assert "apply_patch touches this file" in text


def test_patch_operations() -> None:
    assert patch_operations(patch("add a", "update b", "delete c", "move d e")) == (
        ("add", "a"),
        ("update", "b"),
        ("delete", "c"),
        ("update", "d"),
        ("move_from", "d"),
        ("move_to", "e"),
    )
    deleted = "diff --git a/g b/g\ndeleted file mode 100644\n--- a/g\n+++ /dev/null\n@@\n-x\n"
    assert patch_operations(deleted) == (("delete", "g"),)
    assert patch_operations("--- /dev/null\n+++ b/n\n@@\n+x\n") == (("add", "n"),)
    copied = "diff --git a/x b/z\ncopy from x\ncopy to z\n"
    assert ("copy_from", "x") in patch_operations(copied)  # type: ignore[operator]


@pytest.mark.parametrize("name", ["openclaw", "openclaw-2026.4", "nanobot"])
def test_builtin_relations_apply(name: str) -> None:
    catalog = builtin_catalog(name)
    relations = [r for rs in catalog.relations.values() for r in rs]
    assert relations
    assert all(relation_problem(r, catalog) is None for r in relations)
    write = catalog.call_write_tool
    assert any(r.tool == "apply_patch" and r.acts_as == write for r in relations)


@pytest.mark.parametrize("name", ["openclaw", "nanobot"])
def test_a_bundle_carries_the_relations(name: str) -> None:
    catalog = builtin_catalog(name)
    again = catalog_from_definition([dict(d) for d in catalog.definition])
    assert again.relations == catalog.relations


def _catalog(tmp_path: Path, relation: str) -> Path:
    path = tmp_path / "cat.toml"
    path.write_text(
        'name = "mine"\nextends = "openclaw"\n'
        'tools = [\n  { id = "note_edit", section = "fs", argument_kind = "path", '
        'argument_key = "file" },\n  { id = "memo", section = "fs" },\n]\n'
        f"[[relations]]\n{relation}",
        encoding="utf-8",
    )
    return path


def test_an_operator_relation_is_applied(tmp_path: Path) -> None:
    path = _catalog(tmp_path, 'tool = "note_edit"\nacts_as = "read"\npaths = "argument"\n')
    catalog = load_catalog(str(path))
    assert [r.acts_as for r in catalog.relations["note_edit"]] == ["read"]
    assert catalog.relations["apply_patch"] == builtin_catalog("openclaw").relations["apply_patch"]
    policy = tmp_path / "policy.yaml"
    policy.write_text('catalog: ./cat.toml\ntools:\n  deny: ["read(./secret.txt)"]\n')
    res = resolve(load_policy(policy), RunContext(workspace=WS))
    assert res.decide_call("note_edit", {"file": "secret.txt"}).effect.label == "deny"
    assert res.decide_call("note_edit", {"file": "other.txt"}).effect.label == "allow"


@pytest.mark.parametrize(
    ("relation", "field", "words"),
    [
        ('tool = "note_edit"\nacts_as = "raed"\npaths = "argument"\n', "acts_as", '"read"'),
        ('tool = "note_edit"\nacts_as = "read"\npaths = "patch"\n', "paths", "patch"),
        ('tool = "memo"\nacts_as = "read"\npaths = "argument"\n', "key", "argument_key"),
        ('tool = "note_edit"\nacts_as = "exec"\npaths = "argument"\n', "acts_as", "path"),
    ],
)
def test_a_relation_that_cannot_apply_is_an_error_where_written(
    tmp_path: Path, relation: str, field: str, words: str
) -> None:
    path = _catalog(tmp_path, relation)
    with pytest.raises(PolicyError) as err:
        load_catalog(str(path))
    (problem,) = err.value.diagnostics
    assert problem.code == "PC140" and problem.path.endswith(field)
    assert problem.source is not None and problem.source.file == str(path)
    assert problem.source.line >= 6
    assert words in problem.message + (problem.fix or "")


def test_operations_only_with_a_patch(tmp_path: Path) -> None:
    bad = 'tool = "note_edit"\nacts_as = "read"\npaths = "argument"\noperations = ["add"]\n'
    with pytest.raises(PolicyError) as err:
        load_catalog(str(_catalog(tmp_path, bad)))
    assert "operations go with" in str(err.value)


DOCS = Path(__file__).resolve().parents[2] / "docs" / "policies.md"


def _docs_section() -> str:
    return DOCS.read_text(encoding="utf-8").split('<a id="relations"></a>', 1)[1]


def test_the_documented_relations_are_the_catalogs() -> None:
    text = _docs_section().split("<!-- relations:openclaw -->", 1)[1]
    rows = [line for line in text.split("\n\n", 1)[0].splitlines() if line.startswith("| `")]
    documented = set()
    for row in rows:
        tool, acts_as, _ = (cell.strip().strip("`") for cell in row.strip("|").split("|"))
        documented.add((tool, acts_as))
    catalog = builtin_catalog("openclaw")
    declared = {(r.tool, r.acts_as) for rs in catalog.relations.values() for r in rs}
    assert documented == declared


def test_the_documented_operator_relation_works(tmp_path: Path) -> None:
    example = _docs_section().split("```toml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "host.toml").write_text(example, encoding="utf-8")
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        'catalog: ./host.toml\ntools:\n  deny: ["read(./secret.txt)", "write(./locked/**)"]\n'
    )
    res = resolve(load_policy(policy), RunContext(workspace=WS))
    assert res.decide_call("multi_edit", {"file_path": "secret.txt"}).effect.label == "deny"
    assert res.decide_call("multi_edit", {"file_path": "locked/a"}).effect.label == "deny"
    assert res.decide_call("multi_edit", {"file_path": "src/a"}).effect.label == "allow"
