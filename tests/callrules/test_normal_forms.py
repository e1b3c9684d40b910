"""A rule and a call are compared in one normal form: URL paths (percent-decoding of unreserved
characters, `//` collapsed, dot segments removed) and process-relative paths (`/proc/self/cwd`,
`/dev/fd/N`), which name the run's files, not the deciding process's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from callrules_helpers import EFFECTS, env_for, layer

from policyctl.callrules import SpecifierError, compile_rule, decide_call
from policyctl.callrules.urls import normal_path

WEB = {
    "deny": ["web_fetch(https://x.example/admin/*)", "web_fetch(https://x.example/%61pi/v1/*)"],
    "allow": ["web_fetch(https://x.example/*)"],
}


@dataclass(frozen=True)
class Case:
    value: str
    expect: str
    by: str | None = None


ADMIN = "web_fetch(https://x.example/admin/*)"
API = "web_fetch(https://x.example/%61pi/v1/*)"
UNANALYSABLE = "cannot be analysed"

URL_CASES = [
    Case("https://x.example/admin/users", "deny", ADMIN),
    Case("https://x.example/%61dmin/users", "deny", ADMIN),  # %61 is `a`
    Case("https://x.example/%61%64%6D%69%6E/users", "deny", ADMIN),
    Case("https://x.example//admin/users", "deny", ADMIN),
    Case("https://x.example/admin//users", "deny", ADMIN),
    Case("https://x.example///admin/users", "deny", ADMIN),
    Case("https://x.example/a/../admin/users", "deny", ADMIN),
    Case("https://x.example/a/./../admin/users", "deny", ADMIN),
    Case("https://x.example/./admin/users", "deny", ADMIN),
    Case("https://x.example/a/%2e%2e/admin/users", "deny", ADMIN),
    Case("https://x.example/a//..//admin/users", "deny", ADMIN),
    Case("https://x.example/api/v1/keys", "deny", API),  # the rule's %61 is decoded too
    Case("https://x.example/%61pi/v1/keys", "deny", API),
    Case("https://x.example/admin%2Fusers", "deny", UNANALYSABLE),  # encoded slash: fail closed
    Case("https://x.example/admin%2fusers", "deny", UNANALYSABLE),
    Case("https://x.example/x%5Cadmin/", "deny", UNANALYSABLE),
    Case("https://x.example/public/x", "allow", "web_fetch(https://x.example/*)"),
    Case("https://x.example/%41dmin/users", "allow"),  # `A` is not `a`: another path
    Case("https://x.example/admin%20x/", "allow"),  # a reserved escape stays as it is
]


def _rules(env: Any) -> Any:
    return [layer("agent", env, web_fetch=WEB)]


@pytest.mark.parametrize("case", URL_CASES, ids=[c.value for c in URL_CASES])
def test_url_paths_are_compared_in_one_form(case: Case) -> None:
    env = env_for("openclaw")
    verdict = decide_call(_rules(env), "web_fetch", {"url": case.value}, env).verdict
    shown = f"{verdict.effect.label} by {verdict.entry} ({verdict.reason.value}: {verdict.detail})"
    assert verdict.effect.label == case.expect, shown
    if case.by == UNANALYSABLE:
        assert verdict.reason.value == UNANALYSABLE, shown
    elif case.by is not None:
        assert verdict.entry == case.by, shown


@pytest.mark.parametrize(
    ("written", "normal"),
    [
        ("/", "/"),
        ("", "/"),
        ("/%7Euser/%2d%5F", "/~user/-_"),
        ("/a%2a", "/a%2A"),  # not unreserved: stays encoded, in upper case
        ("/a/b/../../..", "/"),
        ("/a/b/./", "/a/b/"),
        ("//", "/"),
        ("/a%2Fb", None),
        ("/a%00", None),
    ],
)
def test_normal_path(written: str, normal: str | None) -> None:
    assert normal_path(written) == normal


@pytest.mark.parametrize(
    "rule",
    [
        "web_fetch(https://x.example/a%2Fb/*)",
        "web_fetch(https://x.example/a/../b/*)",
        "web_fetch(https://x.example/./b)",
    ],
)
def test_a_url_pattern_that_could_never_match_is_refused(rule: str) -> None:
    env = env_for("openclaw")
    with pytest.raises(SpecifierError) as caught:
        compile_rule(rule, EFFECTS["deny"], env.spec("web_fetch"), "policy.yaml:3:5")
    problem = caught.value.problem
    assert problem.code == "PC353"
    assert problem.fix
