"""Specifiers that do not parse: the code, the offending text and its offset in the entry."""

from __future__ import annotations

import pytest
from callrules_helpers import env_for

from policyctl.callrules import Effect, SpecifierError, compile_rule, split_entry
from policyctl.callrules.diagnose import to_diagnostic
from policyctl.diagnostics import CODES, Source

ENV = env_for("openclaw")

#: (entry, code, offset of the offending character inside the entry)
BAD = [
    ("exec(rm *", "PC350", 9),
    ("exec()", "PC350", 5),
    ("exec(   )", "PC350", 5),
    ("exec(echo 'hi)", "PC350", 10),
    ('exec(echo "hi)', "PC350", 10),
    ("exec(echo hi\\)", "PC350", 12),
    ("exec(ls; rm x)", "PC351", 7),
    ("exec(ls | grep x)", "PC351", 8),
    ("exec(ls && rm)", "PC351", 8),
    ("exec(echo > out)", "PC351", 10),
    ("exec(echo $HOME)", "PC351", 10),
    ('exec(echo "$HOME")', "PC351", 11),
    ("exec(echo `id`)", "PC351", 10),
    ("exec(a\nb)", "PC351", 6),
    ("exec(command=git *)", "PC355", 5),
    ("exec(FOO=1 make all)", "PC351", 5),
    ("read(!secret)", "PC352", 5),
    ("read(~bob/x)", "PC352", 5),
    ("read(./a/../b)", "PC352", 5),
    ("read(  ./x/./y)", "PC352", 7),
    ("web_fetch(domain:example.*)", "PC353", 25),
    ("web_fetch(domain:ex*ample.com)", "PC353", 19),
    ("web_fetch(domain:*.*.example.com)", "PC353", 19),
    ("web_fetch(domain:10.0.0.1)", "PC353", 17),
    ("web_fetch(ip:10.0.0.1/8)", "PC353", 13),
    ("web_fetch(ip:banana)", "PC353", 13),
    ("web_fetch(example.com)", "PC353", 10),
    ("web_fetch(https://exa*mple.com/)", "PC353", 21),
    ("web_fetch(https://a@b.com/)", "PC353", 10),
    ("web_fetch(https://b.com:99999/)", "PC353", 10),
    ("web_fetch(url=https://x/*)", "PC355", 10),
    ("github__merge_pr(acme/*)", "PC354", 17),
    ("github__merge_pr(repo=)", "PC354", 17),
    ("github__merge_pr(repo=a, repo=b)", "PC354", 25),
    ("github__merge_pr(repo=a,)", "PC354", 23),
    ('github__merge_pr(repo="a)', "PC354", 22),
    ("github__merge_pr(re po=a)", "PC354", 17),
]


@pytest.mark.parametrize(("entry", "code", "offset"), BAD, ids=[b[0] for b in BAD])
def test_bad_specifier_is_reported_where_it_is(entry: str, code: str, offset: int) -> None:
    tool = entry.split("(", 1)[0]
    with pytest.raises(SpecifierError) as caught:
        compile_rule(entry, Effect.DENY, ENV.spec(tool))
    problem = caught.value.problem
    assert (problem.code, problem.offset) == (code, offset), str(problem)
    assert problem.entry == entry
    assert code in CODES


GOOD = [
    ("exec(git *)", "git *"),
    ("exec(git:*)", "git *"),
    ("exec(npm run test:*)", "npm run test *"),
    ('exec(git commit -m "fix bug")', "git commit -m fix bug"),
    ("exec(echo '*')", "echo *"),
    ("exec( ls  -la )", "ls -la"),
    ("exec(*)", None),
    ("exec(workdir=/tmp/*)", None),
    ("read(.env)", None),
    ("read(./secrets/)", None),
    ("read(~/.ssh/**)", None),
    ("read(/etc/**)", None),
    ("read(./)", None),
    ("web_fetch(domain:*.example.com)", None),
    ("web_fetch(ip:10.0.0.0/8)", None),
    ("web_fetch(ip:fd00::/8)", None),
    ("web_fetch(https://api.github.com/repos/acme/*)", None),
    ("web_fetch(domain:BÜCHER.example.)", None),
    ('github__merge_pr(title="a, b", repo=acme/*)', None),
    ("github__merge_pr(data.items.0.id=7)", None),
]


@pytest.mark.parametrize(("entry", "rendered"), GOOD, ids=[g[0] for g in GOOD])
def test_good_specifiers_compile(entry: str, rendered: str | None) -> None:
    tool = split_entry(entry)[0]
    rule = compile_rule(entry, Effect.ALLOW, ENV.spec(tool), "p.yaml:3:5")
    assert (rule.tool, rule.entry, rule.source) == (tool, entry, "p.yaml:3:5")
    if rendered is not None:
        assert rule.matcher.pattern.render() == rendered  # type: ignore[attr-defined]


def test_idna_domain_specifier_is_normalised() -> None:
    rule = compile_rule("web_fetch(domain:BÜCHER.example.)", Effect.ALLOW, ENV.spec("web_fetch"))
    assert rule.matcher.host.base == "xn--bcher-kva.example"  # type: ignore[attr-defined]


def test_split_entry() -> None:
    assert split_entry("Exec(git *)") == ("exec", "git *", 5)
    assert split_entry(" read ") == ("read", None, -1)
    with pytest.raises(SpecifierError):
        split_entry("read)")
    with pytest.raises(SpecifierError):
        split_entry("(x)")


def test_problem_becomes_a_diagnostic_at_file_line_col() -> None:
    with pytest.raises(SpecifierError) as caught:
        compile_rule("web_fetch(domain:example.*)", Effect.DENY, ENV.spec("web_fetch"))
    diag = to_diagnostic(caught.value.problem, Source("p.yaml", 4, 12), "tools.deny[0]", 1)
    assert str(diag.source) == "p.yaml:4:38"  # 12 + the opening quote + offset 25
    assert diag.code == "PC353" and diag.fix and "example.*" in diag.message
