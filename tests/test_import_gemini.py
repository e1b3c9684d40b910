"""`policyctl import --from gemini`: each rule's translation, the rules whose effect changes in a
deny-wins pipeline, and the imported documents deciding calls as Gemini CLI would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from policyctl import RunContext, load_policy, resolve
from policyctl.callrules import Effect
from policyctl.catalog.load import builtin_catalog
from policyctl.cli.main import main
from policyctl.cli.validate import validate_file
from policyctl.formats.read import parse_text
from policyctl.importers import gemini_effects
from policyctl.importers.calls import build_document, grant_map
from policyctl.importers.gemini import import_gemini
from policyctl.settings import default_limits


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    return "'" + value + "'" if '"' in value or "\\" in value else f'"{value}"'


def toml(*rules: dict[str, Any]) -> str:
    out = []
    for rule in rules:
        out.append("[[rule]]")
        out.extend(f"{k} = {toml_value(v)}" for k, v in rule.items())
        out.append("")
    return "\n".join(out)


def translate(*rules: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    located = parse_text(toml(*rules), "rules.toml", "toml", default_limits())
    cat = builtin_catalog("openclaw")
    imp = import_gemini(located, "rules.toml", cat)
    return build_document(imp, "openclaw", grant_map(cat)).document["tools"], imp.findings


SHELL = {"toolName": "run_shell_command"}
# (rule, {list: entries that must be there}, entries that must be nowhere, codes)
CASES: list[tuple[dict[str, Any], dict[str, list[str]], list[str], set[str]]] = [
    ({**SHELL, "commandPrefix": "git"}, {"allow": ["exec(git *)"]}, [], set()),
    ({**SHELL, "commandPrefix": "git status"}, {"allow": ["exec(git status *)"]}, [], set()),
    (
        {**SHELL, "commandPrefix": ["git diff", "git log"]},
        {"allow": ["exec(git diff *)", "exec(git log *)"]},
        [],
        set(),
    ),
    (
        {**SHELL, "commandPrefix": "rm -rf", "decision": "deny"},
        {"deny": ["exec(rm -rf *)"]},
        [],
        set(),
    ),
    ({**SHELL, "commandPrefix": "ls | grep"}, {}, ["exec(ls *)"], {"PC125"}),
    (
        {**SHELL, "commandPrefix": "ls | grep", "decision": "deny"},
        {"deny": ["exec(ls *)"]},
        [],
        {"PC127"},
    ),
    (
        {**SHELL, "commandRegex": "git (commit|push)"},
        {"allow": ["exec(git commit* *)", "exec(git push* *)"]},
        [],
        set(),
    ),
    (
        {**SHELL, "commandRegex": "git status.*", "decision": "ask_user"},
        {"ask": ["exec(git status* *)"]},
        [],
        set(),
    ),
    ({**SHELL, "commandRegex": "git\\s+log"}, {"allow": ["exec(git log* *)"]}, [], set()),
    (
        {**SHELL, "commandRegex": "rm .*-rf", "decision": "deny"},
        {"deny": ["exec(rm *)"]},
        [],
        {"PC127"},
    ),
    ({**SHELL, "commandRegex": "rm .*-rf"}, {}, ["exec(rm *)"], {"PC125"}),
    (
        {**SHELL, "commandRegex": "[a-z]+ --force", "decision": "deny"},
        {"deny": ["exec(*)"]},
        [],
        {"PC127"},
    ),
    ({**SHELL, "commandRegex": "^git", "decision": "deny"}, {}, ["exec(git *)"], {"PC129"}),
    ({**SHELL, "commandRegex": "git status$"}, {}, ["exec(git status)"], {"PC129"}),
    (
        {**SHELL, "commandRegex": "curl|wget", "decision": "deny"},
        {"deny": ["exec(*)"]},
        [],
        {"PC127"},
    ),
    ({**SHELL, "argsPattern": '"command":"npm test'}, {"allow": ["exec(npm test* *)"]}, [], set()),
    ({**SHELL, "decision": "deny"}, {"deny": ["exec"]}, [], set()),
    ({"toolName": "read_file", "decision": "deny"}, {"deny": ["read"]}, [], set()),
    (
        {"toolName": "read_file", "argsPattern": "\\.env", "decision": "deny"},
        {"deny": ["read(*)"]},
        [],
        {"PC127"},
    ),
    ({"toolName": "read_file", "argsPattern": "src/"}, {}, ["read(*)"], {"PC125"}),
    (
        {"toolName": ["write_file", "replace"], "decision": "ask_user"},
        {"ask": ["write", "edit"]},
        [],
        set(),
    ),
    ({"toolName": "list_directory", "decision": "deny"}, {"deny": ["ls"]}, [], set()),
    ({"toolName": "google_web_search"}, {"allow": ["web_search"]}, [], set()),
    ({"toolName": "web_fetch", "decision": "deny"}, {"deny": ["web_fetch"]}, [], set()),
    (
        {"mcpName": "github", "toolName": "merge_pr", "decision": "ask_user"},
        {"ask": ["github__merge_pr"]},
        [],
        set(),
    ),
    ({"mcpName": "github", "decision": "deny"}, {"deny": ["github__*"]}, [], set()),
    (
        {"mcpName": "github", "decision": "ask_user"},
        {"ask": ["github__*"], "allow": ["github__*"]},
        [],
        set(),
    ),
    ({"mcpName": "*", "decision": "deny"}, {"deny": ["bundle-mcp"]}, [], set()),
    ({"toolName": "mcp_github_merge_pr"}, {"allow": ["github__merge_pr"]}, [], set()),
    (
        {"mcpName": "github", "toolName": "merge_pr", "argsPattern": '"repo":"acme/'},
        {"allow": ['github__merge_pr(repo="acme/*")']},
        [],
        {"PC127"},
    ),
    (
        {
            "mcpName": "github",
            "toolName": "merge_pr",
            "argsPattern": '"repo":"acme/',
            "decision": "deny",
        },
        {"deny": ["github__merge_pr(*)"]},
        [],
        {"PC127"},
    ),
    (
        {"mcpName": "github", "toolName": "merge_pr", "argsPattern": '"repo":"a.*--force'},
        {},
        ['github__merge_pr(repo="a*")'],
        {"PC125"},
    ),
    ({"toolName": "mcp_github_*", "decision": "deny"}, {"deny": ["github__*"]}, [], set()),
    ({"toolName": "mcp_*", "decision": "deny"}, {"deny": ["bundle-mcp"]}, [], set()),
    (
        {"toolName": "github__merge_pr", "decision": "deny"},
        {"deny": ["github__merge_pr"]},
        [],
        set(),
    ),
    ({"toolName": "*", "decision": "deny"}, {"deny": ["*"]}, [], set()),
    ({**SHELL, "decision": "allow", "modes": ["yolo"], "priority": 999}, {}, [], {"PC129"}),
    (
        {**SHELL, "commandPrefix": "ls", "modes": ["default", "yolo"]},
        {"allow": ["exec(ls *)"]},
        [],
        set(),
    ),
    ({**SHELL, "commandPrefix": "ls", "interactive": False}, {}, ["exec(ls *)"], {"PC129"}),
    ({"toolName": "save_memory", "decision": "deny"}, {}, ["save_memory"], {"PC125"}),
    (
        {"toolName": ["save_memory", "write_file"], "decision": "deny"},
        {"deny": ["write"]},
        [],
        {"PC125"},
    ),
    ({"toolName": "read_fil", "decision": "deny"}, {}, ["read_fil"], {"PC125"}),
    ({"toolName": "glob"}, {}, ["find_files"], {"PC125"}),  # openclaw has no glob tool
    (
        {**SHELL, "subagent": "investigator", "decision": "deny"},
        {"deny": ["exec(*)"]},
        [],
        {"PC127"},
    ),
    ({**SHELL, "subagent": "investigator"}, {}, ["exec"], {"PC125"}),
    ({"toolAnnotations": {"readOnlyHint": False}, "decision": "deny"}, {}, ["*"], {"PC125"}),
    (
        {
            "toolName": "write_file",
            "safety_checker": {"type": "in-process", "name": "allowed-path"},
        },
        {},
        [],
        {"PC125"},
    ),
    (
        {**SHELL, "commandPrefix": "rm", "decision": "deny", "denyMessage": "no"},
        {"deny": ["exec(rm *)"]},
        [],
        {"PC129"},
    ),
    ({"toolName": "read_file", "decison": "deny"}, {"allow": ["read"]}, [], {"PC125"}),
    (
        {"toolName": "read_file", "decision": "deny", "denyMessage": "x"},
        {"deny": ["read"]},
        [],
        {"PC129"},
    ),
]


@pytest.mark.parametrize(("rule", "present", "absent", "codes"), CASES, ids=lambda c: str(c))
def test_each_rule_translates_or_is_reported(
    rule: dict[str, Any], present: dict[str, list[str]], absent: list[str], codes: set[str]
) -> None:
    tools, findings = translate({"decision": "allow", "priority": 100, **rule})
    for key, entries in present.items():
        for entry in entries:
            assert entry in tools.get(key, []), (entry, tools)
    everything = [e for key in ("allow", "ask", "deny") for e in tools.get(key, [])]
    for entry in absent:
        if entry in ("exec", "read", "*"):  # admitted by Gemini CLI's defaults otherwise
            assert entry not in tools.get("deny", []), tools
        else:
            assert entry not in everything, tools
    found = {d.code for d in findings if d.code != "PC129" or "PC129" in codes}
    assert found == codes, [str(d) for d in findings]
    for d in findings:
        assert d.source is None or d.source.line >= 1


# -- rules whose effect changes --------------------------------------------------------------


def changed(*rules: dict[str, Any]) -> list[str]:
    _, findings = translate(*rules)
    return [d.message for d in findings if d.code == "PC126"]


def shell(prefix: str, decision: str, priority: int) -> dict[str, Any]:
    return {**SHELL, "commandPrefix": prefix, "decision": decision, "priority": priority}


def test_a_higher_priority_allow_over_a_deny_is_listed_with_both_locations() -> None:
    _, findings = translate(shell("git", "allow", 500), shell("git push", "deny", 100))
    (d,) = [d for d in findings if d.code == "PC126"]
    assert d.source is not None and (d.source.line, d.source.column) == (1, 1)
    assert "rule #2 at rules.toml:7:1 (deny, priority 100)" in d.message
    assert "exec(git *) and exec(git push *)" in d.message and "the deny decides" in d.message


@pytest.mark.parametrize(
    ("rules", "count"),
    [
        ((shell("git", "allow", 500), shell("git push", "deny", 100)), 1),
        ((shell("git", "deny", 500), shell("git push", "allow", 100)), 0),  # deny already won
        ((shell("git", "allow", 500), shell("git push", "allow", 100)), 0),  # same effect
        ((shell("git", "deny", 500), shell("git push", "deny", 100)), 0),
        ((shell("npm", "allow", 500), shell("git push", "deny", 100)), 0),  # never the same call
        ((shell("git status", "allow", 500), shell("git push", "deny", 100)), 0),
        ((shell("git", "ask_user", 500), shell("git push", "deny", 100)), 1),
        ((shell("git", "allow", 500), shell("git push", "ask_user", 100)), 1),
        ((shell("git", "allow", 100), shell("git push", "deny", 100)), 1),  # same priority
        ((shell("git push", "allow", 50), shell("git", "deny", 100)), 0),  # lower priority
        (
            (
                {**SHELL, "decision": "allow", "priority": 900},
                shell("rm", "deny", 10),
            ),
            1,
        ),
        (
            (
                {"mcpName": "github", "decision": "allow", "priority": 500},
                {"toolName": "mcp_github_merge_pr", "decision": "deny", "priority": 100},
            ),
            1,
        ),
        (
            (
                {"toolName": "read_file", "decision": "allow", "priority": 999},
                {"toolName": "*", "decision": "deny", "priority": 1},
            ),
            1,
        ),
        (
            (
                {**SHELL, "commandRegex": "git (commit|push)", "decision": "allow", "priority": 9},
                shell("git push --force", "deny", 1),
            ),
            1,
        ),
        (
            (
                {**SHELL, "commandRegex": "git commit", "decision": "allow", "priority": 9},
                shell("git push", "deny", 1),
            ),
            0,
        ),
    ],
)
def test_changed_effects(rules: tuple[dict[str, Any], ...], count: int) -> None:
    assert len(changed(*rules)) == count


def test_the_analysis_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gemini_effects, "MAX_COMPARISONS", 10)
    rules = [shell(f"tool{n % 3} sub{n}", "allow" if n % 2 else "deny", n) for n in range(20)]
    messages = changed(*rules)
    assert messages and "stopped after 10 comparisons" in messages[-1]


def test_many_unrelated_rules_are_compared_in_buckets() -> None:
    rules = [shell(f"cmd{n} run", "allow" if n % 2 else "deny", n % 1000) for n in range(3000)]
    assert changed(*rules) == []


def test_patterns_overlap_is_a_word_level_intersection() -> None:
    from policyctl.callrules.shell_pattern import parse_shell_pattern

    def items(text: str) -> Any:
        return parse_shell_pattern(text, text, 0).items

    overlap = gemini_effects.patterns_overlap
    assert overlap(items("git *"), items("git push *"))
    assert overlap(items("git * main"), items("git push origin *"))
    assert overlap(items("git commit* *"), items("git commit-tree x"))
    assert not overlap(items("git status"), items("git status *x"))  # x needs one more word
    assert not overlap(items("git"), items("git push *"))
    assert not overlap(items("npm test *"), items("npm run *"))


# -- the imported document decides calls as Gemini CLI would (but for the listed changes) ----

RULES = (
    shell("git", "allow", 500),
    shell("git push", "deny", 100),  # listed: Gemini CLI let the allow above win
    shell("npm test", "allow", 10),
    shell("rm", "deny", 900),
    {"toolName": "write_file", "decision": "ask_user", "priority": 10},
    {"mcpName": "github", "toolName": "merge_pr", "decision": "deny", "priority": 10},
)

CALLS = [
    ("exec", {"command": "git status"}, "allow"),
    ("exec", {"command": "git push origin main"}, "deny"),  # the reported change
    ("exec", {"command": "npm test -- --watch"}, "allow"),
    ("exec", {"command": "npm install"}, "ask"),  # no rule: Gemini CLI asks
    ("exec", {"command": 'npm  "test"'}, "allow"),  # words after quote removal, not raw text
    ("exec", {"command": "git status; rm -rf /"}, "deny"),
    ("read", {"path": "src/app.py"}, "allow"),  # read_file: allowed by default
    ("ls", {"path": "."}, "allow"),
    ("write", {"path": "notes.md"}, "ask"),
    ("edit", {"path": "notes.md"}, "ask"),  # replace: asks by default
    ("web_fetch", {"url": "https://example.com/"}, "ask"),
    ("github__merge_pr", {"repo": "acme/x"}, "deny"),
]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, str]:
    tmp = tmp_path_factory.mktemp("gemini")
    src = tmp / "rules.toml"
    src.write_text(toml(*RULES), encoding="utf-8")
    out = tmp / "policy.yaml"
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["import", str(src), "--from", "gemini", "-o", str(out)]) == 0
    ctx = RunContext(workspace=str(tmp), home=str(tmp))
    return out, resolve(load_policy(str(out)), ctx, require_tools=False), err.getvalue()


@pytest.mark.parametrize(("tool", "args", "expected"), CALLS, ids=lambda c: str(c))
def test_calls_are_decided_as_gemini_cli_decides_them(
    imported: tuple[Path, Any, str], tool: str, args: dict[str, str], expected: str
) -> None:
    _, res, _ = imported
    assert res.decide_call(tool, args).verdict.effect is Effect[expected.upper()]


def test_a_tool_gemini_cli_lacks_is_not_granted(imported: tuple[Path, Any, str]) -> None:
    path, _, _ = imported
    ctx = RunContext(provider="openai")  # apply_patch exists for openai models only
    res = resolve(load_policy(str(path)), ctx, require_tools=False)
    assert "apply_patch" not in res.allowed and "skills_read" not in res.allowed
    assert "write" in res.allowed and "read" in res.allowed


def test_the_change_is_on_stderr_and_in_the_header(imported: tuple[Path, Any, str]) -> None:
    path, _, err = imported
    assert "rules.toml:1:1: PC126 rule #1 (allow, priority 500)" in err
    assert "#   1:1 PC126 rule #1 (allow, priority 500)" in path.read_text(encoding="utf-8")


def test_the_imported_document_validates(imported: tuple[Path, Any, str]) -> None:
    path, _, _ = imported
    assert not [str(d) for d in validate_file(str(path), strict=False, max_contexts=50)]


def test_an_mcp_argument_prefix_admits_only_that_prefix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "rules.toml"
    rule = {"mcpName": "github", "toolName": "merge_pr", "argsPattern": '"repo":"acme/'}
    src.write_text(toml({**rule, "decision": "allow", "priority": 5}), encoding="utf-8")
    out = tmp_path / "policy.yaml"
    assert main(["import", str(src), "-o", str(out)]) == 0
    capsys.readouterr()
    res = resolve(load_policy(str(out)), RunContext(), require_tools=False)
    assert res.decide_call("github__merge_pr", {"repo": "acme/web"}).verdict.effect is Effect.ALLOW
    assert res.decide_call("github__merge_pr", {"repo": "evil/web"}).verdict.effect is Effect.ASK


def test_a_toml_file_is_gemini_by_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "mine.toml"
    src.write_text(toml(shell("git", "allow", 1)), encoding="utf-8")
    assert main(["import", str(src)]) == 0
    assert "exec(git *)" in capsys.readouterr().out
