"""`policyctl import` of Claude Code and Gemini CLI files: malformed input is located and writes
nothing, hostile input is capped and escaped like every other input."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from policyctl.cli.main import main
from policyctl.settings import default_limits


@pytest.fixture
def run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Iterator[object]:
    def go(name: str, text: str, *flags: str) -> tuple[int, str, str, Path]:
        src = tmp_path / name
        src.write_text(text, encoding="utf-8")
        out = tmp_path / "out.yaml"
        code = main(["import", str(src), "-o", str(out), *flags])
        _, err = capsys.readouterr()
        assert "Traceback" not in err
        return code, err, out.read_text(encoding="utf-8") if out.exists() else "", src

    yield go


MALFORMED = [
    (
        "settings.json",
        '{"permissions": {"allow": ["Bash(ls)" "Read"]}}',
        ("--from", "claude"),
        "1:",
    ),
    ("settings.json", '{"permissions": {"allow": "Bash(ls)"}}', (), "PC128"),
    ("settings.json", '{"permissions": {"allow": ["Bash(ls)",]}}', (), "1:39"),  # not JSON
    ("settings.json", '{"permissions": {"deny": ["Bash(rm:*)", 42]}}', (), "PC128"),
    ("settings.json", '{"permissions": []}', ("--from", "claude"), "PC128"),
    ("settings.json", '{"env": {}}', ("--from", "claude"), "PC128"),
    ("settings.json", '["Bash"]', ("--from", "claude"), "PC202"),
    ("settings.json", '{"permissions": {"additionalDirectories": "/x"}}', (), "PC128"),
    (
        "rules.toml",
        '[[rule]]\ntoolName = "read_file"\ndecision = "deny"\npriority = \n',
        (),
        "PC103",
    ),
    ("rules.toml", '[[rule]]\ntoolName = "read_file"\npriority = 1\n', (), "PC128"),
    (
        "rules.toml",
        '[[rule]]\ntoolName = "read_file"\ndecision = "block"\npriority = 1\n',
        (),
        "PC128",
    ),
    (
        "rules.toml",
        '[[rule]]\ntoolName = "read_file"\ndecision = "deny"\npriority = 1000\n',
        (),
        "PC128",
    ),
    (
        "rules.toml",
        '[[rule]]\ntoolName = "read_file"\ndecision = "deny"\npriority = "hi"\n',
        (),
        "PC128",
    ),
    (
        "rules.toml",
        '[[rule]]\ntoolName = "read_file"\ncommandPrefix = "git"\n'
        'decision = "deny"\npriority = 1\n',
        (),
        "PC128",
    ),
    (
        "rules.toml",
        '[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "a"\ncommandRegex = "b"\n'
        'decision = "deny"\npriority = 1\n',
        (),
        "PC128",
    ),
    ("rules.toml", '[[rule]]\ndecision = "deny"\npriority = 1\nmodes = ["turbo"]\n', (), "PC128"),
    ("rules.toml", 'rule = "deny everything"\n', (), "PC128"),
    ("rules.toml", '[[rule]]\ndecision = ["deny"]\npriority = 1\nmodes = [{}]\n', (), "PC128"),
    ("rules.toml", '[[rule]]\ndecision = "deny"\npriority = true\ntoolName = [1]\n', (), "PC128"),
    ("rules.toml", "[[rule]]\n[[rule]]\n", (), "PC128"),
    ("rules.toml", 'title = "no rules"\n', (), "PC128"),
]


@pytest.mark.parametrize(("name", "text", "flags", "expected"), MALFORMED, ids=lambda c: str(c))
def test_malformed_input_is_located_and_nothing_is_written(
    run: object, name: str, text: str, flags: tuple[str, ...], expected: str
) -> None:
    code, err, out, src = run(name, text, *flags)  # type: ignore[operator]
    assert code == 2
    assert out == ""
    assert expected in err
    assert f"{src}:" in err  # file:line:col


def test_a_syntax_error_never_quotes_the_line(run: object) -> None:
    text = '{"permissions": {"allow": []},\n "env": {"KEY": "sk-live-123456789" oops}}'
    code, err, _, src = run("settings.json", text, "--from", "claude")  # type: ignore[operator]
    assert code == 2 and f"{src}:2:" in err and "sk-live" not in err


def test_a_misplaced_priority_is_reported_where_it_is_written(run: object) -> None:
    text = '[[rule]]\ntoolName = "read_file"\ndecision = "deny"\npriority = 1000\n'
    _, err, _, src = run("rules.toml", text)  # type: ignore[operator]
    assert f"{src}:4:12: PC128 rule #1: priority must be an integer from 0 to 999" in err


def test_a_claude_file_is_recognised_by_its_content(run: object) -> None:
    code, err, out, _ = run("anything.json", '{"permissions": {"allow": ["Bash(ls)"]}}')  # type: ignore[operator]
    assert code == 0 and "exec(ls)" in out, err
    # an OpenClaw config that happens to have a permissions key is still OpenClaw's
    code, err, out, _ = run("oc.json", '{"permissions": {}, "tools": {"deny": ["exec"]}}')  # type: ignore[operator]
    assert code == 0 and "deny:\n    - exec" in out, err


def test_oversized_files_are_refused_like_policies(
    run: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POLICYCTL_MAX_FILE_BYTES", "200")
    default_limits.cache_clear()
    try:
        rules = json.dumps({"permissions": {"allow": [f"Bash(cmd{n})" for n in range(50)]}})
        code, err, out, _ = run("settings.json", rules, "--from", "claude")  # type: ignore[operator]
        assert code == 2 and "PC106" in err and out == ""
        toml = '[[rule]]\ntoolName = "read_file"\ndecision = "deny"\npriority = 1\n' * 10
        code, err, out, _ = run("rules.toml", toml)  # type: ignore[operator]
        assert code == 2 and "PC106" in err and out == ""
    finally:
        default_limits.cache_clear()


def test_deep_nesting_is_refused(run: object) -> None:
    deep = '{"permissions": {"allow": [], "x": ' + "[" * 500 + "]" * 500 + "}}"
    code, err, out, _ = run("settings.json", deep, "--from", "claude")  # type: ignore[operator]
    assert code == 2 and "PC107" in err and out == ""


HOSTILE = "\x1b[2J\x1b[31mok\u202e\u2028"


def test_control_characters_never_reach_the_output_raw(run: object) -> None:
    settings = {
        "permissions": {
            "allow": [f"Bash(echo {HOSTILE})", f"Read(./{HOSTILE}/**)"],
            "deny": [f"Nope{HOSTILE}", f"mcp__srv__{HOSTILE}"],
        },
        HOSTILE: 1,
    }
    code, err, out, _ = run("settings.json", json.dumps(settings))  # type: ignore[operator]
    assert code == 0
    for ch in ("\x1b", "\u202e", "\u2028"):
        assert ch not in out and ch not in err
    document = YAML(typ="safe").load(out)
    # policy files refuse control characters in entries (PC301): reported, never written
    assert f"exec(echo {HOSTILE})" not in document["tools"]["allow"]
    assert "PC125" in err and "\\u001b" in out.split("catalog:")[0]  # the header, escaped


def _toml_escaped(text: str) -> str:
    return "".join(ch if ch.isalnum() else f"\\u{ord(ch):04x}" for ch in text)


def test_control_characters_in_gemini_rules(run: object) -> None:
    text = (
        '[[rule]]\ntoolName = "run_shell_command"\n'
        f'commandPrefix = "git{_toml_escaped(HOSTILE)}"\n'
        'decision = "deny"\npriority = 1\ndenyMessage = "\\u001b[2J gone"\n'
    )
    code, err, out, _ = run("rules.toml", text)  # type: ignore[operator]
    assert code == 0, err
    for ch in ("\x1b", "\u202e", "\u2028"):
        assert ch not in out and ch not in err


def test_regexes_are_read_never_run(run: object) -> None:
    # a catastrophic-backtracking regex and a group that expands past the alternative cap
    huge_group = "(" + "|".join(f"c{n}" for n in range(200)) + ") (x|y)"
    text = "".join(
        f"[[rule]]\ntoolName = \"run_shell_command\"\ncommandRegex = '{regex}'\n"
        f'decision = "deny"\npriority = {n}\n'
        for n, regex in enumerate(["(a+)+$", "(a|aa)+b", huge_group])
    )
    code, err, out, _ = run("rules.toml", text)  # type: ignore[operator]
    assert code == 0, err
    document = YAML(typ="safe").load(out)
    assert len(document["tools"]["deny"]) < 10  # cut, not expanded 400 ways


@pytest.mark.parametrize("name", ["claude-settings.json", "gemini-rules.toml"])
def test_the_shipped_samples_import_into_documents_that_validate(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from conftest import ROOT

    from policyctl.cli.validate import validate_file

    out = tmp_path / "policy.yaml"
    assert main(["import", str(ROOT / "tests" / "data" / name), "-o", str(out)]) == 0
    capsys.readouterr()
    assert not [str(d) for d in validate_file(str(out), strict=False, max_contexts=50)]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_RULE_TEXT = st.one_of(
    st.text(max_size=30),
    st.builds(
        lambda tool, spec: f"{tool}({spec})",
        st.sampled_from(["Bash", "Read", "Edit", "Write", "WebFetch", "mcp__s__t", "Task", "x"]),
        st.text(alphabet="ab */.~:$\"'\\|&;()[]!-\x1b\u2028", max_size=20),
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "allow": st.lists(_RULE_TEXT, max_size=4) | _JSON,
            "ask": st.lists(_RULE_TEXT, max_size=4),
            "deny": st.lists(_RULE_TEXT, max_size=4) | _JSON,
            "defaultMode": st.sampled_from(
                ["default", "dontAsk", "acceptEdits", "bypassPermissions"]
            )
            | _JSON,
            "additionalDirectories": st.lists(st.text(max_size=10), max_size=2) | _JSON,
        },
    )
)
def test_no_settings_file_makes_the_claude_import_raise(perms: dict[str, object]) -> None:
    from policyctl.catalog.load import builtin_catalog
    from policyctl.formats.read import parse_text
    from policyctl.importers.calls import build_document, grant_map
    from policyctl.importers.claude import import_claude

    located = parse_text(json.dumps({"permissions": perms}), "s.json", "json", default_limits())
    cat = builtin_catalog("openclaw")
    imp = import_claude(located, "s.json", cat)
    doc = build_document(imp, "openclaw", grant_map(cat)).document
    entries = [e for key in ("allow", "ask", "deny") for e in doc["tools"].get(key, [])]
    assert all(isinstance(e, str) and e for e in entries)


_TOML_VALUE = st.one_of(
    st.booleans(),
    st.integers(-5, 1200),
    st.text(alphabet="abgit _-*|().^$\\\"'", max_size=16),
    st.lists(st.text(alphabet="abgit _*", max_size=8), max_size=3),
)


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value)  # ints, and strings as TOML basic strings (ASCII here)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(
                [
                    "toolName",
                    "mcpName",
                    "commandPrefix",
                    "commandRegex",
                    "argsPattern",
                    "decision",
                    "priority",
                    "modes",
                    "interactive",
                    "subagent",
                ]
            ),
            _TOML_VALUE,
            max_size=6,
        ),
        max_size=5,
    )
)
def test_no_policy_file_makes_the_gemini_import_raise(rules: list[dict[str, object]]) -> None:
    from policyctl.catalog.load import builtin_catalog
    from policyctl.formats.read import parse_text
    from policyctl.importers.gemini import import_gemini

    text = (
        "".join(
            "[[rule]]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in rule.items()) for rule in rules
        )
        or "rule = []\n"
    )
    located = parse_text(text, "r.toml", "toml", default_limits())
    import_gemini(located, "r.toml", builtin_catalog("openclaw"))


def test_a_path_pattern_python_cannot_compile_is_a_located_error(tmp_path: Path) -> None:
    # found by the fuzzing above: `[0-.]` is a bracket range Python's re refuses
    from policyctl.cli.validate import validate_file

    path = tmp_path / "policy.yaml"
    path.write_text('tools:\n  deny: ["read([0-.])", "read(a\\\\)"]\n', encoding="utf-8")
    found = [d for d in validate_file(str(path), False, 5) if d.code == "PC352"]
    assert len(found) == 2 and all(d.source and d.source.line == 2 for d in found)


def test_an_entry_the_policy_compiler_refuses_is_reported_not_written(run: object) -> None:
    # a look-alike command word (Cyrillic em) parses as a specifier but no policy accepts it
    settings = {"permissions": {"deny": ["Bash(r\u043c:*)", "Bash(curl:*)"]}}
    code, err, out, src = run("settings.json", json.dumps(settings))  # type: ignore[operator]
    assert code == 0
    assert f"{src}:1:" in err and "PC125" in err and "U+043C" in err
    assert "exec(curl *)" in out and "\u043c" not in out.split("catalog:")[1]
    assert "1 rule(s) not imported exactly" in err
