"""A list's first-word index (`RuleIndex`) finds the same rule as a scan of the whole list:
the first matching rule in list order, whichever of its word's rules and the rules without a
literal first word comes first."""

from __future__ import annotations

from callrules_helpers import env_for, tool_rules
from hypothesis import given, settings
from hypothesis import strategies as st

from policyctl.callrules.decide import build_subject
from policyctl.callrules.model import RuleIndex

ENV = env_for("openclaw")
PATTERNS = [
    "git *",
    "git push *",
    "* --force",
    "* main",
    "rm *",
    "npm test",
    "*",
    "git * main",
    "ls",
]
COMMANDS = ["git push --force main", "git status", "rm -rf /", "npm test", "ls", "make main"]


@settings(max_examples=300)
@given(
    st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=8),
    st.sampled_from(COMMANDS),
    st.booleans(),
)
def test_the_index_finds_the_first_matching_rule_of_the_list(
    patterns: list[str], command: str, strict: bool
) -> None:
    rules = tool_rules("exec", ENV, {"deny": [f"exec({p})" for p in patterns]}).deny
    index = RuleIndex.build(rules)
    for part in build_subject("exec", {"command": command}, ENV).parts:
        scanned = next((r for r in rules if r.matcher.matches(part, strict)), None)
        assert index.first_match(part.words, part, strict) is scanned


def test_a_generic_rule_before_the_words_own_is_the_one_reported() -> None:
    rules = tool_rules("exec", ENV, {"deny": ["exec(* --force)", "exec(git push *)"]}).deny
    index = RuleIndex.build(rules)
    (part,) = build_subject("exec", {"command": "git push --force"}, ENV).parts
    assert index.first_match(part.words, part, False) is rules[0]
    reordered = tool_rules("exec", ENV, {"deny": ["exec(git push *)", "exec(* --force)"]}).deny
    (part,) = build_subject("exec", {"command": "git push --force"}, ENV).parts
    assert RuleIndex.build(reordered).first_match(part.words, part, False) is reordered[0]


def test_the_index_holds_each_rule_once() -> None:
    # a merged tuple per word would hold words x generic rules: 50,000 distinct words and
    # 50,000 rules without one were minutes of load time and gigabytes
    deny = [f"exec(tool{i} *)" for i in range(200)] + [f"exec(* --x{i})" for i in range(200)]
    index = RuleIndex.build(tool_rules("exec", ENV, {"deny": deny}).deny)
    held = sum(len(v) for v in index.by_word.values()) + len(index.generic)
    assert held == len(deny)
