"""`policyctl import` of Claude Code settings.json: each rule's translation, what Claude Code
does with unsettled calls, and the imported documents deciding calls as Claude Code would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from policyctl import RunContext, load_policy, resolve
from policyctl.callrules import Effect
from policyctl.catalog.load import builtin_catalog
from policyctl.cli.main import main
from policyctl.cli.validate import validate_file
from policyctl.formats.read import parse_text
from policyctl.importers.calls import build_document, grant_map
from policyctl.importers.claude import import_claude
from policyctl.settings import default_limits


def translate(perms: dict[str, Any], catalog: str = "openclaw") -> tuple[dict[str, Any], Any]:
    text = json.dumps({"permissions": perms}, indent=2)
    located = parse_text(text, "settings.json", "json", default_limits())
    cat = builtin_catalog(catalog)
    imp = import_claude(located, "settings.json", cat)
    return build_document(imp, catalog, grant_map(cat)).document["tools"], imp.findings


# (list, rule, {list: entries that must be there}, entries that must not be anywhere, codes)
CASES: list[tuple[str, str, dict[str, list[str]], list[str], set[str]]] = [
    ("allow", "Bash(git diff:*)", {"allow": ["exec(git diff *)"]}, [], set()),
    ("allow", "Bash(git diff *)", {"allow": ["exec(git diff *)"]}, [], set()),
    ("allow", "Bash(npm run test)", {"allow": ["exec(npm run test)"]}, [], set()),
    ("allow", "Bash(ls*)", {"allow": ["exec(ls* *)"]}, [], set()),
    ("deny", "Bash(*install)", {"deny": ["exec(* *install)"]}, [], set()),
    ("allow", "Bash(* --version)", {"allow": ["exec(* --version)"]}, [], set()),
    ("deny", "Bash(*rm*)", {"deny": ["exec(* *)"]}, [], {"PC127"}),
    ("allow", "Bash(*)", {"allow": ["exec"]}, [], set()),
    ("deny", "Bash(rm*rf)", {"deny": ["exec(rm* *)"]}, [], {"PC127"}),
    ("allow", "Bash(git*push)", {"allow": ["exec(git*push)"]}, [], {"PC127"}),
    ("deny", "Bash", {"deny": ["exec"]}, [], set()),
    ("ask", "Bash(git push:*)", {"ask": ["exec(git push *)"]}, [], set()),
    ("allow", "Bash(echo $HOME)", {}, ["exec(echo $HOME)"], {"PC125"}),
    ("allow", "Bash(make && make install)", {}, ["exec(make && make install)"], {"PC125"}),
    ("deny", "Read(./secrets/**)", {"deny": ["read(./secrets/**)", "ls(./secrets/**)"]}, [], set()),
    ("deny", "Read(.env)", {"deny": ["read(.env)"]}, [], set()),
    ("allow", "Read(*.md)", {"allow": ["read(./**/*.md)"]}, ["read(*.md)"], set()),
    ("deny", "Read(//etc/shadow)", {"deny": ["read(/etc/shadow)"]}, [], set()),
    ("deny", "Read(~/.ssh/**)", {"deny": ["read(~/.ssh/**)"]}, [], set()),
    ("deny", "Read(../outside/**)", {}, ["read(../outside/**)"], {"PC125"}),
    ("deny", "Read(!keep)", {}, ["read(!keep)"], {"PC125"}),
    (
        "deny",
        "Edit(/config/**)",
        {"deny": ["edit(./config/**)", "write(./config/**)", "apply_patch(./config/**)"]},
        ["read(./config/**)"],
        {"PC129"},
    ),
    ("allow", "Edit(docs/)", {"allow": ["edit(./**/docs/)", "edit(./**/docs/**)"]}, [], set()),
    ("allow", "Edit(./src/)", {"allow": ["write(./src/)", "write(./src/**)"]}, [], set()),
    ("deny", "Write(./dist/**)", {"deny": ["write(./dist/**)"]}, ["edit(./dist/**)"], set()),
    ("deny", "MultiEdit(*.lock)", {"deny": ["edit(*.lock)", "write(*.lock)"]}, [], set()),
    ("deny", "Edit", {"deny": ["edit", "write", "apply_patch"]}, [], set()),
    (
        "allow",
        "WebFetch(domain:docs.python.org)",
        {"allow": ["web_fetch(domain:docs.python.org)"]},
        [],
        set(),
    ),
    (
        "deny",
        "WebFetch(domain:*.internal.test)",
        {"deny": ["web_fetch(domain:*.internal.test)", "web_fetch(domain:internal.test)"]},
        [],
        {"PC129"},
    ),
    (
        "allow",
        "WebFetch(domain:*.python.org)",
        {"allow": ["web_fetch(domain:*.python.org)"]},
        ["web_fetch(domain:python.org)"],
        set(),
    ),
    ("deny", "WebFetch(domain:*)", {"deny": ["web_fetch(*)"]}, [], set()),
    ("allow", "WebFetch(https://x.test/*)", {}, ["web_fetch(https://x.test/*)"], {"PC125"}),
    ("deny", "WebFetch(domain:example.*)", {}, ["web_fetch(domain:example.*)"], {"PC125"}),
    ("allow", "WebSearch", {"allow": ["web_search"]}, [], set()),
    ("allow", "mcp__github__create_pr", {"allow": ["github__create_pr"]}, [], set()),
    ("deny", "mcp__github", {"deny": ["github__*"]}, [], set()),
    ("ask", "mcp__github", {"ask": ["github__*"], "allow": ["github__*"]}, [], set()),
    ("deny", "mcp__github__*", {"deny": ["github__*"]}, [], set()),
    ("allow", "mcp__github__get_*", {"allow": ["github__get_*"]}, [], set()),
    ("deny", "mcp__git*", {}, [], {"PC125"}),
    ("allow", "mcp__github__create_pr(repo:acme)", {}, ["github__create_pr"], {"PC125"}),
    ("deny", "Task", {}, ["task"], {"PC125"}),
    ("deny", "NotebookEdit", {}, ["notebookedit"], {"PC125"}),
    ("allow", "bash(ls)", {}, ["exec(ls)"], {"PC125"}),
    ("allow", "Bash(git status", {}, [], {"PC125"}),
    ("deny", "Glob", {}, ["find_files"], {"PC125"}),  # the openclaw catalog has no glob tool
]


@pytest.mark.parametrize(("lst", "rule", "present", "absent", "codes"), CASES, ids=lambda c: str(c))
def test_each_rule_translates_or_is_reported(
    lst: str, rule: str, present: dict[str, list[str]], absent: list[str], codes: set[str]
) -> None:
    tools, findings = translate({lst: [rule]})
    for key, entries in present.items():
        for entry in entries:
            assert entry in tools.get(key, []), (entry, tools)
    everything = [e for key in ("allow", "ask", "deny") for e in tools.get(key, [])]
    for entry in absent:
        assert entry not in everything
    found = {d.code for d in findings if d.code != "PC129" or "PC129" in codes}
    assert found == codes, [str(d) for d in findings]
    for d in findings:
        if d.code in codes:
            assert d.source is not None and d.source.line == 4  # the rule's own line


@pytest.mark.parametrize(
    ("rule", "entries"),
    [
        ("Read(./src/**)", ["read_file(./src/**)", "list_dir(./src/**)"]),
        (
            "Edit(./src/**)",
            ["write_file(./src/**)", "edit_file(./src/**)", "apply_patch(./src/**)"],
        ),
        ("Glob", ["find_files"]),
        ("Grep", ["grep"]),
        ("LS", ["list_dir"]),
    ],
)
def test_tools_come_from_the_catalog(rule: str, entries: list[str]) -> None:
    tools, findings = translate({"allow": [rule]}, catalog="nanobot")
    assert set(entries) <= set(tools["allow"]), tools
    assert not [d for d in findings if d.code != "PC129"]


def test_a_read_deny_says_which_search_tools_it_cannot_reach() -> None:
    _, findings = translate({"deny": ["Read(./secrets/**)", "Read(.env)"]}, catalog="nanobot")
    (note,) = [d for d in findings if d.code == "PC125"]
    assert "find_files, grep take no path rules" in note.message and note.source is not None
    _, findings = translate({"deny": ["Read(./secrets/**)"]})  # openclaw: no such tools
    assert not [d for d in findings if d.code == "PC125"]


def test_unsettled_calls_ask_and_reads_inside_the_working_directories_do_not() -> None:
    tools, _ = translate({"allow": ["Bash(git:*)"], "additionalDirectories": ["~/shared/"]})
    assert tools["callDefault"] == "ask"
    assert {"read(./)", "read(./**)", "read(~/shared)", "read(~/shared/**)"} <= set(tools["allow"])
    assert {"write", "edit", "web_fetch"} <= set(tools["ask"]) & set(tools["allow"])
    assert "exec" not in tools["allow"] and "exec" not in tools["ask"]  # its rules + callDefault
    assert "skills_read" in tools["deny"]  # granted through read in policyctl; not a Claude tool


def test_an_additional_directory_outside_the_project_is_reported() -> None:
    _, findings = translate({"additionalDirectories": ["../sibling"]})
    assert [d.code for d in findings if d.code == "PC125"] == ["PC125"]


def test_dont_ask_admits_only_the_allowed_tools(imported: Any) -> None:
    perms = {"allow": ["Bash(git:*)", "Read(./src/**)"], "defaultMode": "dontAsk"}
    path, res = imported({"permissions": perms})
    assert res.allowed == ("ls", "read", "exec")
    assert res.decide_call("read", {"path": "src/a.py"}).verdict.effect is Effect.ALLOW
    assert res.decide_call("read", {"path": "README.md"}).verdict.effect is Effect.DENY
    assert res.decide_call("exec", {"command": "git log"}).verdict.effect is Effect.ALLOW
    assert res.decide_call("exec", {"command": "make"}).verdict.effect is Effect.DENY
    assert res.decide_call("write", {"path": "x"}).verdict.effect is Effect.DENY
    assert not [str(d) for d in validate_file(str(path), strict=False, max_contexts=50)]


def test_dont_ask_refuses_what_no_allow_rule_admits() -> None:
    tools, _ = translate({"allow": ["Bash(git:*)"], "defaultMode": "dontAsk"})
    assert tools["callDefault"] == "deny"
    assert tools["allow"] == ["exec(git *)"]
    tools, _ = translate({"deny": ["Bash(rm:*)"], "defaultMode": "dontAsk"})
    assert tools["deny"][-1] == "*"  # nothing admitted at all


def test_plan_mode_is_imported_as_default_and_said() -> None:
    tools, findings = translate({"allow": ["Bash(ls)"], "defaultMode": "plan"})
    assert [d.code for d in findings] == ["PC129"] and "imported as default" in findings[0].message
    assert tools == translate({"allow": ["Bash(ls)"]})[0]


def test_an_unknown_mode_is_reported_and_imported_as_default() -> None:
    tools, findings = translate({"allow": ["Bash(ls)"], "defaultMode": "yolo"})
    assert [d.code for d in findings] == ["PC125"]
    assert tools["callDefault"] == "ask"


def test_other_settings_are_named_never_quoted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(
        json.dumps(
            {
                "permissions": {"allow": ["Bash(ls)"]},
                "env": {"TOKEN": "sk-secret-123456"},
                "hooks": {},
            }
        ),
        encoding="utf-8",
    )
    assert main(["import", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "env: not imported" in err and "hooks can allow or refuse calls" in err
    assert "sk-secret" not in out + err


# -- the imported document decides calls as Claude Code would --------------------------------

SETTINGS = {
    "permissions": {
        "allow": ["Bash(git:*)", "WebFetch(domain:docs.python.org)", "Edit(./src/**)"],
        "ask": ["Bash(git push:*)"],
        "deny": ["Read(./secrets/**)", "Read(.env)", "Bash(rm:*)"],
    }
}

CALLS = [
    ("exec", {"command": "git status"}, "allow"),
    ("exec", {"command": "git push origin main"}, "ask"),
    ("exec", {"command": "npm install"}, "ask"),  # no rule: Claude Code asks
    ("exec", {"command": "git status && rm -rf /"}, "deny"),
    ("exec", {"command": "git log | wc -l"}, "ask"),  # wc: no rule
    ("read", {"path": "src/app.py"}, "allow"),  # inside the working directory
    ("read", {"path": "/etc/hosts"}, "ask"),  # outside it
    ("read", {"path": "secrets/key.pem"}, "deny"),
    ("read", {"path": "config/.env"}, "deny"),
    ("write", {"path": "src/app.py"}, "allow"),
    ("write", {"path": "README.md"}, "ask"),
    ("web_fetch", {"url": "https://docs.python.org/3/"}, "allow"),
    ("web_fetch", {"url": "https://evil.test/"}, "ask"),
]


@pytest.fixture
def imported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Any:
    def run(settings: dict[str, Any]) -> tuple[Path, Any]:
        src = tmp_path / "settings.json"
        src.write_text(json.dumps(settings, indent=2), encoding="utf-8")
        out = tmp_path / "policy.yaml"
        assert main(["import", str(src), "-o", str(out)]) == 0
        capsys.readouterr()
        (tmp_path / "ws" / "src").mkdir(parents=True, exist_ok=True)
        ctx = RunContext(workspace=str(tmp_path / "ws"), home=str(tmp_path / "home"))
        return out, resolve(load_policy(str(out)), ctx, require_tools=False)

    return run


@pytest.mark.parametrize(("tool", "args", "expected"), CALLS, ids=lambda c: str(c))
def test_calls_are_decided_as_claude_code_decides_them(
    imported: Any, tool: str, args: dict[str, str], expected: str
) -> None:
    _, res = imported(SETTINGS)
    assert res.decide_call(tool, args).verdict.effect is Effect[expected.upper()]


def test_the_imported_document_validates(imported: Any) -> None:
    path, _ = imported(SETTINGS)
    assert not [str(d) for d in validate_file(str(path), strict=False, max_contexts=50)]


@pytest.mark.parametrize(
    ("mode", "tool", "args", "expected"),
    [
        ("dontAsk", "exec", {"command": "npm install"}, "deny"),
        ("dontAsk", "exec", {"command": "git status"}, "allow"),
        ("bypassPermissions", "exec", {"command": "npm install"}, "allow"),
        ("bypassPermissions", "exec", {"command": "git push"}, "ask"),
        ("bypassPermissions", "read", {"path": "secrets/x"}, "deny"),
        ("acceptEdits", "write", {"path": "README.md"}, "allow"),
        ("acceptEdits", "write", {"path": "/etc/motd"}, "ask"),
        ("default", "write", {"path": "README.md"}, "ask"),
    ],
)
def test_modes(imported: Any, mode: str, tool: str, args: dict[str, str], expected: str) -> None:
    settings = {"permissions": {**SETTINGS["permissions"], "defaultMode": mode}}
    _, res = imported(settings)
    assert res.decide_call(tool, args).verdict.effect is Effect[expected.upper()]


def test_every_entry_says_where_it_came_from(imported: Any) -> None:
    path, _ = imported(SETTINGS)
    text = path.read_text(encoding="utf-8")
    assert "- exec(git *)  # 4:7 Bash(git:*)" in text or "- exec(git *) # 4:7 Bash(git:*)" in text
    assert "Claude Code reads inside its working directories without asking" in text
    assert YAML(typ="safe").load(text)["tools"]["ask"][0] == "exec(git push *)"
