"""A rule and a call are compared in one normal form: URL paths (percent-decoding of unreserved
characters, `//` collapsed, dot segments removed) and process-relative paths (`/proc/self/cwd`,
`/dev/fd/N`), which name the run's files, not the deciding process's."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import pytest
from callrules_helpers import EFFECTS, env_for, layer, make_workspace

from policyctl.callrules import Roots, SpecifierError, compile_rule, decide_call
from policyctl.callrules.procfs import real_path
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


# -- process-relative paths ------------------------------------------------------------------

READ = {
    "deny": ["read(./secrets/)", "read(/proc/*/environ)"],
    "allow": ["read(*)"],
}
SECRETS = "read(./secrets/)"
ANY = "read(*)"

PATH_CASES = [
    Case("/proc/self/cwd/secrets/key", "deny", SECRETS),  # the run's cwd, not the decider's
    Case("/proc/thread-self/cwd/secrets/key", "deny", SECRETS),
    Case("/proc/self/task/1/cwd/secrets/key", "deny", SECRETS),
    Case("/proc/self/cwd/../ws/secrets/key", "deny", SECRETS),
    Case("./here/secrets/key", "deny", SECRETS),  # a link in the workspace to /proc/self/cwd
    Case("{ws}/../../../../../../proc/self/root{ws}/secrets/key", "deny", SECRETS),
    Case("/proc/self/environ", "deny", "read(/proc/*/environ)"),
    Case("/proc/12345/cwd/secrets/key", "deny", UNANALYSABLE),  # another process: unknown
    Case("/proc/1/root/etc/passwd", "deny", UNANALYSABLE),
    Case("/proc/self/fd/3", "deny", UNANALYSABLE),  # an open file of the running process
    Case("/proc/self/exe", "deny", UNANALYSABLE),
    Case("/dev/fd/3", "deny", UNANALYSABLE),
    Case("/dev/fd/0", "deny", UNANALYSABLE),
    Case("./fds/3", "deny", UNANALYSABLE),  # a link in the workspace to /dev/fd
    Case("/dev/stdin", "allow", ANY),  # the run's own stream, kept as written
    Case("/dev/stdout", "allow", ANY),
    Case("/proc/self/status", "allow", ANY),
]


@pytest.fixture(scope="module")
def proc_roots(tmp_path_factory: pytest.TempPathFactory) -> Roots:
    ws, home = make_workspace(tmp_path_factory.mktemp("procfs"))
    (ws / "here").symlink_to("/proc/self/cwd")
    (ws / "fds").symlink_to("/dev/fd")
    return Roots(str(ws), str(home))


@pytest.mark.parametrize("case", PATH_CASES, ids=[c.value for c in PATH_CASES])
def test_process_relative_paths_resolve_against_the_run(case: Case, proc_roots: Roots) -> None:
    env = env_for("openclaw", proc_roots)
    path = case.value.replace("{ws}", str(proc_roots.workspace))
    verdict = decide_call([layer("agent", env, read=READ)], "read", {"path": path}, env).verdict
    shown = f"{verdict.effect.label} by {verdict.entry} ({verdict.reason.value}: {verdict.detail})"
    assert verdict.effect.label == case.expect, shown
    if case.by == UNANALYSABLE:
        assert verdict.reason.value == UNANALYSABLE, shown
    else:
        assert verdict.entry == case.by, shown


def test_the_runs_cwd_unknown_makes_proc_self_cwd_unanalysable() -> None:
    env = env_for("openclaw", Roots(None, None))
    rules = [layer("agent", env, read=READ)]
    verdict = decide_call(rules, "read", {"path": "/proc/self/cwd/x"}, env).verdict
    assert verdict.reason.value == UNANALYSABLE
    assert "working directory" in verdict.detail


@pytest.mark.parametrize(
    ("written", "real"),
    [
        ("/usr/bin/../lib", "/usr/lib"),
        ("/proc/self/root/usr", "/usr"),
        ("/proc/self/cwd/x", "/run/cwd/x"),
        ("/proc/self/cwd/..", "/run"),
    ],
)
def test_real_path(written: str, real: str) -> None:
    expected = os.path.realpath(real) if os.path.exists(real) else real
    assert real_path(written, "/run/cwd") == expected


def test_proc_self_cwd_is_what_a_process_of_the_run_sees(proc_roots: Roots) -> None:
    """The claim against the kernel: bash started in the workspace resolves /proc/self/cwd
    to the workspace, as `real_path` does for the run."""
    import subprocess

    ws = str(proc_roots.workspace)
    seen = subprocess.run(
        ["/bin/bash", "-c", "readlink -f /proc/self/cwd/secrets/key; readlink -f /proc/self/root"],
        cwd=ws,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert seen == [real_path("/proc/self/cwd/secrets/key", ws), real_path("/proc/self/root", ws)]
