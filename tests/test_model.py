"""The document model: strict keys everywhere, located schema errors, committed schemas."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, MakePolicy

from policyctl import PolicyError
from policyctl.cli.schema import SCHEMAS, render


@pytest.mark.parametrize(
    ("text", "line", "key", "fix"),
    [
        ("tools:\n  denny: [exec]\n", 2, "denny", 'did you mean "deny"?'),
        (
            "agents:\n  entries:\n    a:\n      tools:\n        alsoalow: [x]\n",
            5,
            "alsoalow",
            'did you mean "alsoAllow"?',
        ),
        (
            "channels:\n  slack:\n    groups:\n      C1:\n        tool: {}\n",
            5,
            "tool",
            'did you mean "tools"?',
        ),
        ("tools:\n  sandbox:\n    tools:\n      allow: []\n      denied: []\n", 5, "denied", None),
        (
            "tools:\n  byProvider:\n    openai:\n      profiles: coding\n",
            4,
            "profiles",
            'did you mean "profile"?',
        ),
        ("toolz: {}\n", 1, "toolz", 'did you mean "tools"?'),
    ],
)
def test_unknown_keys_are_errors_everywhere(
    make_policy: MakePolicy, text: str, line: int, key: str, fix: str | None
) -> None:
    with pytest.raises(PolicyError) as exc:
        make_policy(text)
    d = exc.value.diagnostics[0]
    assert d.code == "PC201" and f'"{key}"' in d.message
    assert d.source is not None and d.source.line == line
    if fix:
        assert d.fix == fix


def test_wrong_types_and_values_are_located(make_policy: MakePolicy) -> None:
    with pytest.raises(PolicyError) as exc:
        make_policy(
            "tools:\n  deny: exec\n  allow: [1]\n"
            "agents:\n  defaults:\n    sandbox: {mode: sometimes}\n"
        )
    by_code = {(d.code, d.source.line) for d in exc.value.diagnostics if d.source}
    assert ("PC202", 2) in by_code  # a string where a list is expected
    assert ("PC202", 3) in by_code  # a number in a list of entries
    assert ("PC203", 6) in by_code  # not one of off / all / non-main


def test_every_error_is_reported_in_one_run(make_policy: MakePolicy) -> None:
    with pytest.raises(PolicyError) as exc:
        make_policy(
            "tools:\n  denny: []\n  profile: codng\nagents:\n  entries:\n    a:\n      tols: {}\n"
        )
    codes = sorted(d.code for d in exc.value.diagnostics)
    assert codes == ["PC201", "PC201"]  # schema errors first; semantics after they are fixed


def test_legacy_agent_list_needs_id(make_policy: MakePolicy) -> None:
    with pytest.raises(PolicyError) as exc:
        make_policy("agents:\n  list:\n    - name: x\n")
    d = exc.value.diagnostics[0]
    assert d.code == "PC204" and d.source is not None and d.source.line == 3


@pytest.mark.parametrize("kind", sorted(SCHEMAS))
def test_committed_schema_matches_model(kind: str) -> None:
    filename = SCHEMAS[kind][0]
    committed = (ROOT / "schemas" / filename).read_text(encoding="utf-8")
    assert committed == render(kind), (
        f"schemas/{filename} is stale: run `policyctl schema --output-dir schemas`"
    )


def test_schema_forbids_unknown_keys_and_knows_extends() -> None:
    schema = json.loads(render("policy"))
    assert schema["additionalProperties"] is False
    assert "extends" in schema["properties"]
    tools_def = schema["$defs"]["ToolsConfig"]
    assert tools_def["additionalProperties"] is False
    assert {
        "allow",
        "alsoAllow",
        "deny",
        "profile",
        "byProvider",
        "toolsBySender",
        "sandbox",
        "subagents",
    } <= set(tools_def["properties"])


def test_examples_validate_against_committed_schema_shape() -> None:
    # Every top-level key of every example is a schema property (a cheap end-to-end check).
    schema = json.loads((ROOT / "schemas" / "policy.schema.json").read_text(encoding="utf-8"))
    from policyctl.document.extends import load_document

    for path in sorted(Path(ROOT / "examples").glob("*.*")):
        if path.suffix in (".yaml", ".toml", ".json") and ".test." not in path.name:
            doc = load_document(path)
            assert set(doc.data) <= set(schema["properties"]), path


def _properties(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    yield from (("(top level)." + k, v) for k, v in schema["properties"].items())
    for name, definition in schema["$defs"].items():
        yield from ((f"{name}.{k}", v) for k, v in definition.get("properties", {}).items())


def test_every_policy_field_has_a_description_for_editors() -> None:
    schema = json.loads(render("policy"))
    missing = [where for where, prop in _properties(schema) if not prop.get("description")]
    assert missing == []
    undocumented = [n for n, d in schema["$defs"].items() if not d.get("description")]
    assert undocumented == []


def test_profile_and_catalog_names_are_offered_as_an_enum() -> None:
    schema = json.loads(render("policy"))
    profiles = [prop for where, prop in _properties(schema) if where.endswith(".profile")]
    assert len(profiles) == 2  # ToolsConfig.profile and ProviderTools.profile
    for prop in profiles:
        enums = [branch["enum"] for branch in prop["anyOf"] if "enum" in branch]
        assert enums and {"minimal", "coding", "messaging", "full", "readonly"} <= set(enums[0])
        # an operator catalog's own profile stays valid: policyctl reports unknown ones itself
        assert {"type": "string"} in [{"type": b.get("type")} for b in prop["anyOf"]]
    catalog = schema["properties"]["catalog"]
    [names] = [b["enum"] for b in catalog["anyOf"] if "enum" in b]
    # every built-in catalog, the agent hosts' ones included
    assert {"openclaw", "openclaw-2026.4", "nanobot", "claude-code", "gemini-cli", "codex"} <= set(
        names
    )
