"""Until compile, resolve and the runtime enforce call rules, policy files cannot carry them:
a deny that validates but is not enforced would be a hole."""

from __future__ import annotations

from pathlib import Path

import pytest

from policyctl.cli.validate import validate_file


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ('tools:\n  deny: ["exec(rm *)"]\n', "PC301"),
        ('tools:\n  allow: ["read(./src/**)"]\n', "PC301"),
        ("tools:\n  ask: [exec]\n", "PC201"),
        ("tools:\n  callDefault: ask\n", "PC201"),
        (
            "agents:\n  list:\n    - id: a\n"
            '      tools:\n        deny: ["web_fetch(domain:x.com)"]\n',
            "PC301",
        ),
    ],
)
def test_call_rule_syntax_is_still_an_error(tmp_path: Path, body: str, code: str) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(body, encoding="utf-8")
    diags = validate_file(str(path), strict=False, max_contexts=10)
    assert code in {d.code for d in diags if d.severity.value == "error"}, [str(d) for d in diags]
