"""validate's call-rule checks (PC470-PC472) on whole policies: found where they hold, silent
on rules that work, and PC472 never claimed from a sample of the matrix."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from policyctl.analysis import call_checks as callchecks
from policyctl.analysis.validate import validate_path

GOOD = """\
catalog: openclaw
tools:
  profile: coding
  deny: ["exec(rm *)", "exec(sudo *)", "read(**/.env)", "web_fetch(domain:*.internal)"]
  ask: ["exec(git push *)"]
agents:
  entries:
    coder:
      tools:
        allow: ["exec(git *)", "exec(npm test *)", read, write, "web_fetch(domain:docs.python.org)"]
        callDefault: ask
"""


def codes(tmp_path: Path, text: str, max_contexts: int = 2000, strict: bool = False) -> list[str]:
    path = tmp_path / "p.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    found = validate_path(str(path), max_contexts=max_contexts, strict=strict)
    return [f"{d.code} {d.severity.value} {d.message}" for d in found]


def test_working_call_rules_raise_nothing(tmp_path: Path) -> None:
    found = codes(tmp_path, GOOD)
    assert not [c for c in found if c.startswith(("PC47", "PC3"))], found


def test_an_allow_an_ask_of_the_same_scope_covers_is_reported(tmp_path: Path) -> None:
    found = codes(
        tmp_path,
        """\
        catalog: openclaw
        tools:
          profile: coding
          ask: ["read(./secrets/)"]
          allow: ["read(./secrets/key)", "read(./src/**)", exec, write]
        """,
    )
    hits = [c for c in found if c.startswith("PC471")]
    assert len(hits) == 1 and 'allow "read(./secrets/key)"' in hits[0] and "asked by ask" in hits[0]


def test_an_allow_at_another_layer_is_not_shadowed(tmp_path: Path) -> None:
    found = codes(
        tmp_path,
        """\
        catalog: openclaw
        tools:
          profile: coding
          deny: ["exec(git *)"]
        agents:
          entries:
            coder:
              tools:
                allow: ["exec(git push *)", read]
        """,
    )
    assert not [c for c in found if c.startswith("PC471")], found


def test_never_deciding_is_not_claimed_from_a_sample(tmp_path: Path) -> None:
    text = """\
    catalog: openclaw
    tools:
      profile: coding
    agents:
      entries:
        reviewer:
          tools:
            deny: [exec, "exec(rm *)"]
    """
    assert [c for c in codes(tmp_path, text) if c.startswith("PC472")]
    assert not [c for c in codes(tmp_path, text, max_contexts=1) if c.startswith("PC472")]


def test_a_rule_reached_in_one_context_decides(tmp_path: Path) -> None:
    # exec is gone for the cheap model only: the rule still decides the other runs' calls
    found = codes(
        tmp_path,
        """\
        catalog: openclaw
        tools:
          profile: coding
          deny: ["exec(rm *)"]
          byProvider:
            openai/gpt-5.4-mini: {deny: [exec]}
        """,
    )
    assert not [c for c in found if c.startswith("PC472")], found


def test_an_ask_a_same_scope_deny_covers_is_reported(tmp_path: Path) -> None:
    found = codes(
        tmp_path,
        """\
        catalog: openclaw
        tools:
          profile: coding
          deny: ["exec(git *)"]
          ask: ["exec(git push *)", "exec(npm publish *)"]
        """,
    )
    hits = [c for c in found if c.startswith("PC471")]
    assert len(hits) == 1 and 'ask "exec(git push *)"' in hits[0] and "never asks" in hits[0]


def test_the_findings_are_errors_under_strict(tmp_path: Path) -> None:
    text = """\
    catalog: openclaw
    tools:
      profile: coding
      deny: ["exec(nohup *)"]
    """
    assert [c for c in codes(tmp_path, text) if c.startswith("PC470 warning")]
    assert [c for c in codes(tmp_path, text, strict=True) if c.startswith("PC470 error")]


def test_a_deny_of_another_command_word_is_never_taken_for_a_cover(tmp_path: Path) -> None:
    # the first-word index must still offer the generic rules (`exec(* --force)`) and the
    # word's own, and report the first covering one in list order
    found = codes(
        tmp_path,
        """\
        catalog: openclaw
        tools:
          profile: coding
          deny: ["exec(npm *)", "exec(* --force)", "exec(git push *)"]
          allow: ["exec(git push --force)", "exec(git status)", "exec(make)", read]
        """,
    )
    hits = [c for c in found if c.startswith("PC471")]
    assert len(hits) == 1, found
    assert 'allow "exec(git push --force)"' in hits[0] and 'deny "exec(* --force)"' in hits[0]


def test_the_shadowing_check_says_where_it_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a policy of very many specifiers on one command would cost words x rules comparisons:
    # the check stops at its budget and says so at the first entry it did not finish
    denies = ", ".join(f'"exec(tool{i} --danger *)"' for i in range(4))
    allows = ", ".join(f'"exec(tool{i} *)"' for i in range(4))
    text = f"""\
        catalog: openclaw
        tools:
          profile: coding
          deny: [{denies}, "exec(* --danger *)"]
          allow: [{allows}, read]
        """
    monkeypatch.setattr(callchecks, "SHADOW_COMPARISONS", 5)
    cut = [c for c in codes(tmp_path, text) if c.startswith("PC417")]
    assert len(cut) == 1 and '"exec(tool2 *)"' in cut[0], cut
    monkeypatch.setattr(callchecks, "SHADOW_COMPARISONS", 500_000)
    assert not [c for c in codes(tmp_path, text) if c.startswith("PC417")]


MISSPELT = """\
catalog: openclaw
inventory:
  plugins: [{name: github_merge, pluginId: github}]
tools:
  profile: coding
  allow: [exec, read, github_merge]
  deny: [{deny}]
"""


@pytest.mark.parametrize(
    ("entry", "code", "expected"),
    [
        # a catalog tool's specifier on a typo of the tool: a compile error with the name
        ('"exce(rm *)"', "PC438", 'did you mean "exec"?'),
        ('"raed(./secrets/**)"', "PC438", 'did you mean "read"?'),
        ('"web_fecth(domain:evil.test)"', "PC438", 'did you mean "web_fetch"?'),
        # a keyed rule may be meant for a plugin tool: checked against the declared inventory
        ('"gihub_merge(repo=acme/*)"', "PC439", 'did you mean "github_merge"?'),
        ('"nothing_like_it(repo=*)"', "PC439", "neither the catalog nor the declared inventory"),
    ],
)
def test_a_call_rule_on_a_misspelt_tool_names_the_tool_meant(
    tmp_path: Path, entry: str, code: str, expected: str
) -> None:
    found = codes(tmp_path, MISSPELT.replace("{deny}", entry))
    hits = [c for c in found if c.startswith(code)]
    assert len(hits) == 1 and expected in hits[0], found
    # the rule is reported once: not again as one that decides no call (PC472)
    assert not [c for c in found if c.startswith(("PC354", "PC472"))], found


@pytest.mark.parametrize(
    "entry", ['"github_merge(repo=acme/*)"', '"exec(rm *)"', '"apply_patch(./x)"']
)
def test_a_call_rule_on_a_known_tool_is_not_called_misspelt(tmp_path: Path, entry: str) -> None:
    found = codes(tmp_path, MISSPELT.replace("{deny}", entry))
    assert not [c for c in found if c.startswith(("PC438", "PC439"))], found


def test_an_unknown_tool_rule_is_an_error_under_strict(tmp_path: Path) -> None:
    found = codes(tmp_path, MISSPELT.replace("{deny}", '"gihub_merge(repo=x)"'), strict=True)
    assert [c for c in found if c.startswith("PC439 error")], found


KEYED = """\
catalog: openclaw
inventory:
  plugins:
    - name: github_merge
      pluginId: github
      parameters: {schema}
tools:
  allow: [read, github_merge]
  deny: [{deny}]
"""
MERGE_SCHEMA = "{type: object, properties: {repo: {type: string}, branch: {type: string}}}"


@pytest.mark.parametrize(
    ("deny", "schema", "expected"),
    [
        ('"github_merge(reop=acme/*)"', MERGE_SCHEMA, 'did you mean "repo"?'),
        ('"github_merge(repo=acme/*, brnach=main)"', MERGE_SCHEMA, 'did you mean "branch"?'),
        ('"github_merge(owner=acme)"', MERGE_SCHEMA, "(they are: branch, repo)"),
    ],
)
def test_a_keyed_rule_on_an_argument_the_schema_lacks_is_reported(
    tmp_path: Path, deny: str, schema: str, expected: str
) -> None:
    found = codes(tmp_path, KEYED.replace("{schema}", schema).replace("{deny}", deny))
    hits = [c for c in found if c.startswith("PC441")]
    assert len(hits) == 1 and expected in hits[0], found


@pytest.mark.parametrize(
    ("deny", "schema"),
    [
        ('"github_merge(repo=acme/*)"', MERGE_SCHEMA),
        ('"github_merge(repo.name=acme)"', MERGE_SCHEMA),  # a nested key: its head is declared
        # a schema that admits other keys says nothing about this one
        ('"github_merge(owner=acme)"', MERGE_SCHEMA[:-1] + ", additionalProperties: true}"),
        # no parameters declared: nothing to check against
        ('"github_merge(owner=acme)"', "null"),
    ],
)
def test_a_keyed_rule_the_schema_allows_is_not_reported(
    tmp_path: Path, deny: str, schema: str
) -> None:
    found = codes(tmp_path, KEYED.replace("{schema}", schema).replace("{deny}", deny))
    assert not [c for c in found if c.startswith("PC441")], found


def test_a_key_the_schema_lacks_really_never_matches_a_call() -> None:
    """The claim behind PC441: a keyed deny on a key the call does not carry refuses nothing,
    while the same deny on the declared key refuses the call."""
    from tests_callaround_helpers import one_layer

    from policyctl.callrules import Roots, decide_call, environment_for
    from policyctl.catalog.load import builtin_catalog

    env = environment_for(builtin_catalog("openclaw"), Roots("/nonexistent", "/nonexistent"), None)
    args = {"repo": "acme/web", "branch": "main"}
    for entry, refused in (("github_merge(reop=*)", False), ("github_merge(repo=*)", True)):
        layers = one_layer(env, "github_merge", deny=[entry])
        verdict = decide_call(layers, "github_merge", args, env).verdict
        assert (verdict.entry == entry) is refused, verdict
