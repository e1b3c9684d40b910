"""validate's call-rule logic: which specifiers can never match, and which allow specifiers a
deny (or ask) of the same layer covers. Each claim is checked against real decisions too: a
covered allow never decides a call the deny does not refuse."""

from __future__ import annotations

import pytest
from tests_callaround_helpers import one_layer

from policyctl.analysis.call_cover import covers, never_matching
from policyctl.callrules import Effect, Roots, compile_rule, decide_call, environment_for
from policyctl.catalog.load import builtin_catalog

CATALOG = builtin_catalog("openclaw")
ENV = environment_for(CATALOG, Roots("/nonexistent-ws", "/nonexistent-home"), None)


def rule(entry: str, effect: Effect = Effect.ALLOW):  # type: ignore[no-untyped-def]
    tool = entry.split("(", 1)[0]
    return compile_rule(entry, effect, ENV.spec(tool))


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ("exec(sh -c *)", "sh is never matched as a command"),
        ("exec(bash *)", "bash is never matched"),
        ("exec(/bin/zsh -c *)", "zsh is never matched"),
        ("exec(eval *)", "eval runs a string"),
        ("exec(source ./env.sh)", "source runs a file"),
        ("exec(if *)", "reserved word"),
        ("exec(nohup *)", "wrapper nohup is stripped"),
        ("exec(timeout 5 rm *)", "write exec(rm *)"),
        ("exec(env FOO=1 make *)", "write exec(make *)"),
        ("exec(/usr/bin/env python *)", "write exec(python *)"),
        ("exec(time make)", "write exec(make)"),
        # a glob command word whose every match ends in one name (its last `/` after its stars)
        ("exec(*/sh *)", "sh is never matched as a command"),
        ("exec(/usr/*/bash -c *)", "bash is never matched"),
        ("exec(*/eval *)", "eval runs a string"),
        ("exec(*/nohup rm *)", "write exec(rm *)"),
    ],
)
def test_patterns_the_analysis_never_leaves_in_place(entry: str, words: str) -> None:
    found = never_matching(rule(entry, Effect.DENY))
    assert found is not None
    assert words in f"{found.reason} {found.fix}"


@pytest.mark.parametrize(
    "entry",
    [
        "exec(git *)",
        "exec(env)",
        "exec(time)",
        "exec(sudo *)",
        "exec(*)",
        "read(.env)",
        "web_fetch(domain:x.test)",
        "exec(xargs rm *)",
        "exec(nohupx *)",
        "exec(*/rm *)",
        "exec(*sh *)",
        "exec(/usr/bin/sh*)",
        "exec(*/ *)",
    ],
)
def test_patterns_that_can_match_are_not_reported(entry: str) -> None:
    assert never_matching(rule(entry, Effect.DENY)) is None


@pytest.mark.parametrize(
    "entry",
    [
        "exec(nohup *)",
        "exec(sh -c *)",
        "exec(timeout 5 rm *)",
        "exec(eval *)",
        "exec(*/sh *)",
        "exec(*/nohup *)",
    ],
)
def test_a_never_matching_deny_really_refuses_nothing(entry: str) -> None:
    layers = one_layer(ENV, "exec", deny=[entry])
    commands = ("nohup rm -rf x", "sh -c 'rm x'", "timeout 5 rm -rf x", "eval rm x")
    for command in (*commands, "/bin/sh -c 'rm x'", "/usr/bin/nohup rm -rf x"):
        verdict = decide_call(layers, "exec", {"command": command}, ENV).verdict
        assert verdict.entry != entry


COVERED = [
    ("exec(*)", "exec(git push *)"),
    ("exec(git *)", "exec(git push *)"),
    ("exec(git *)", "exec(git)"),
    ("exec(git push *)", "exec(git push origin main)"),
    ("exec(git * main)", "exec(git push main)"),
    ("exec(rm -rf *)", "exec(rm -rf *)"),
    ("read(./secrets/)", "read(./secrets/key)"),
    ("read(./secrets)", "read(./secrets/**)"),
    ("read(./)", "read(./src/**)"),
    ("read(~/.ssh)", "read(~/.ssh/id_rsa)"),
    ("read(/etc)", "read(/etc/passwd)"),
    ("web_fetch(domain:*.example.com)", "web_fetch(domain:docs.example.com)"),
    ("web_fetch(domain:*.example.com)", "web_fetch(domain:*.docs.example.com)"),
    ("web_fetch(domain:example.com)", "web_fetch(https://example.com/api/*)"),
    ("web_fetch(ip:10.0.0.0/8)", "web_fetch(ip:10.1.0.0/16)"),
    ("mcp_github_merge(repo=*)", "mcp_github_merge(repo=acme/web)"),
    ("mcp_github_merge(repo=acme/*)", "mcp_github_merge(repo=ACME/web, branch=main)"),
]

NOT_COVERED = [
    ("exec(git push *)", "exec(git *)"),
    ("exec(git push)", "exec(git push *)"),
    ("exec(rm *)", "exec(*)"),
    ("read(./secrets/key)", "read(./secrets/)"),
    ("read(./secrets)", "read(./secretsx/a)"),
    ("read(./src)", "read(.env)"),
    ("read(*.pem)", "read(./keys/**)"),
    ("read(~/.ssh)", "read(./.ssh/x)"),
    ("web_fetch(domain:*.example.com)", "web_fetch(domain:example.com)"),
    ("web_fetch(domain:example.com)", "web_fetch(domain:*.example.com)"),
    ("web_fetch(ip:10.1.0.0/16)", "web_fetch(ip:10.0.0.0/8)"),
    ("mcp_github_merge(repo=acme/*)", "mcp_github_merge(repo=*)"),
    ("mcp_github_merge(repo=acme/*, branch=main)", "mcp_github_merge(repo=acme/x)"),
]


@pytest.mark.parametrize(("broad", "narrow"), COVERED)
def test_covered(broad: str, narrow: str) -> None:
    assert covers(rule(broad, Effect.DENY).matcher, rule(narrow).matcher)


@pytest.mark.parametrize(("broad", "narrow"), NOT_COVERED)
def test_not_covered(broad: str, narrow: str) -> None:
    assert not covers(rule(broad, Effect.DENY).matcher, rule(narrow).matcher)


@pytest.mark.parametrize(
    ("broad", "narrow", "args"),
    [
        ("exec(git *)", "exec(git push *)", {"command": "git push origin main"}),
        ("exec(git push *)", "exec(git push origin main)", {"command": "git push origin main"}),
        ("read(./secrets/)", "read(./secrets/key)", {"path": "secrets/key"}),
        ("read(./secrets)", "read(./secrets/**)", {"path": "secrets/sub/deep"}),
        (
            "web_fetch(domain:*.example.com)",
            "web_fetch(domain:docs.example.com)",
            {"url": "https://docs.example.com/x"},
        ),
    ],
)
def test_a_covered_allow_is_refused_by_the_deny_in_real_decisions(
    broad: str, narrow: str, args: dict[str, str]
) -> None:
    tool = broad.split("(", 1)[0]
    layers = one_layer(ENV, tool, deny=[broad], allow=[narrow])
    decision = decide_call(layers, tool, args, ENV)
    assert decision.verdict.effect is Effect.DENY and decision.verdict.entry == broad
    alone = decide_call(one_layer(ENV, tool, allow=[narrow]), tool, args, ENV)
    assert alone.verdict.effect is Effect.ALLOW  # the allow does admit the call on its own
