"""Laws of call rules, checked with hypothesis.

- most-restrictive is monotone: adding a layer never lowers a call's decision;
- a deny can never become allow (or ask) by adding layers, wherever they are inserted;
- the order of entries in a list does not change the decision;
- word-pattern matching agrees with a naive reference on known words, and `must` implies `may`;
- adversarial shell input never crashes or hangs the analysis or the decision.

No per-example deadline: the machine's load is not the code's speed (bench/ measures that).
"""

from __future__ import annotations

from functools import cache

from callrules_helpers import env_for, layer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policyctl.callrules import CallEnvironment, LayerCallRules, decide_call
from policyctl.callrules.shell import analyse
from policyctl.callrules.wordglob import STAR, WordGlob, WordPattern

ENV: CallEnvironment = env_for("openclaw")
WORDS = ["git", "push", "rm", "ls", "-rf", "main", "x", "sudo", "npm", "test"]
PATTERNS = [
    "exec(git *)",
    "exec(git push *)",
    "exec(rm *)",
    "exec(ls)",
    "exec(* main)",
    "exec(sudo *)",
    "exec(npm test)",
    "exec(*)",
    "exec(git * main)",
]
SEPARATORS = [" && ", "; ", " | ", " || ", "\n"]

words_of_a_command = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)
commands = st.lists(words_of_a_command, min_size=1, max_size=4)
lines = st.builds(
    lambda cmds, seps: "".join(
        " ".join(c) + (seps[i % len(seps)] if i < len(cmds) - 1 else "") for i, c in enumerate(cmds)
    ),
    commands,
    st.lists(st.sampled_from(SEPARATORS), min_size=1, max_size=3),
)
rule_lists = st.lists(st.sampled_from(PATTERNS), max_size=3, unique=True)
tool_rules = st.fixed_dictionaries(
    {
        "deny": rule_lists,
        "ask": rule_lists,
        "allow": rule_lists,
        "name": st.booleans(),
        "default": st.sampled_from(["deny", "ask"]),
        "plain_ask": st.booleans(),
    }
)
layer_specs = st.lists(tool_rules, min_size=1, max_size=4)


def build(specs: list[dict[str, object]]) -> list[LayerCallRules]:
    return [layer(f"l{i}", ENV, exec=spec) for i, spec in enumerate(specs)]


def effect(specs: list[dict[str, object]], line: str) -> int:
    return int(decide_call(build(specs), "exec", {"command": line}, ENV).effect)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layer_specs, tool_rules, st.integers(0, 4), lines)
def test_adding_a_layer_never_lowers_the_decision(
    specs: list[dict[str, object]], extra: dict[str, object], at: int, line: str
) -> None:
    before = effect(specs, line)
    widened = [*specs[:at], extra, *specs[at:]]
    assert effect(widened, line) >= before


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layer_specs, st.lists(tool_rules, min_size=1, max_size=3), lines)
def test_a_deny_is_never_turned_into_allow(
    specs: list[dict[str, object]], more: list[dict[str, object]], line: str
) -> None:
    if effect(specs, line) != 2:
        return
    assert effect(specs + more, line) == 2
    assert effect(more + specs, line) == 2


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tool_rules, lines, st.randoms(use_true_random=False))
def test_entry_order_does_not_matter(spec: dict[str, object], line: str, rnd: object) -> None:
    shuffled = dict(spec)
    for key in ("deny", "ask", "allow"):
        entries = list(spec[key])  # type: ignore[call-overload]
        rnd.shuffle(entries)  # type: ignore[attr-defined]
        shuffled[key] = entries
    assert effect([spec], line) == effect([shuffled], line)


# -- word patterns against a naive reference ------------------------------------------------


def reference(items: tuple[object, ...], words: tuple[str, ...]) -> bool:
    """Exponential-but-obvious recursive matcher (fine for the small sizes generated)."""

    @cache
    def go(i: int, j: int) -> bool:
        if i == len(items):
            return j == len(words)
        item = items[i]
        if item is STAR:
            return any(go(i + 1, k) for k in range(j, len(words) + 1))
        assert isinstance(item, WordGlob)
        return j < len(words) and item.matches(words[j]) and go(i + 1, j + 1)

    return go(0, 0)


pattern_items = st.lists(
    st.one_of(
        st.just(STAR),
        st.sampled_from(["a", "b", "ab"]).map(lambda w: WordGlob((w,))),
        st.sampled_from([("a", ""), ("", "b"), ("", "a", "")]).map(WordGlob),
    ),
    min_size=1,
    max_size=5,
)
subject_words = st.lists(st.sampled_from(["a", "b", "ab", "ba", "c"]), max_size=6)


@settings(max_examples=500, deadline=None)
@given(pattern_items, subject_words)
def test_word_patterns_agree_with_the_reference(items: list[object], words: list[str]) -> None:
    pattern = WordPattern(tuple(items))  # type: ignore[arg-type]
    expected = reference(tuple(items), tuple(words))
    assert pattern.may_match(words) == expected
    assert pattern.must_match(words) == expected


@settings(max_examples=500, deadline=None)
@given(
    pattern_items,
    st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", "c"])), max_size=6),
    st.booleans(),
)
def test_must_implies_may_and_unknowns_stay_sound(
    items: list[object], words: list[str | None], tail: bool
) -> None:
    pattern = WordPattern(tuple(items))  # type: ignore[arg-type]
    must = pattern.must_match(words, tail)
    may = pattern.may_match(words, tail)
    assert not must or may
    # soundness of `must`: every instantiation of the unknown words (here: each as "c" or
    # as nothing) matches the reference
    if must:
        for fill in ((), ("c",), ("a", "b")):
            concrete = tuple(x for w in words for x in ((w,) if w is not None else fill))
            concrete += fill if tail else ()
            assert reference(tuple(items), concrete)


# -- adversarial shell input ----------------------------------------------------------------

SHELL_ALPHABET = [*"abrm -;|&<>()$`'\"\\{}[]*?!#=~\n\t", "$(", "<<", "EOF", "sh -c ", "eval "]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(SHELL_ALPHABET), max_size=60).map("".join))
def test_adversarial_shell_never_crashes(line: str) -> None:
    found = analyse(line)
    assert all(c.words and (c.words[0] is not None) for c in found.commands)
    spec = {"deny": ["exec(rm *)"], "allow": ["exec(ls *)"], "name": False}
    decision = decide_call(build([spec]), "exec", {"command": line}, ENV)
    assert decision.verdict.effect.label in ("allow", "ask", "deny")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_arbitrary_text_never_crashes(line: str) -> None:
    analyse(line)
    decide_call(build([{"deny": ["exec(rm *)"]}]), "exec", {"command": line}, ENV)
    web = [layer("g", ENV, web_fetch={"allow": ["web_fetch(domain:a.com)"]})]
    decide_call(web, "web_fetch", {"url": line}, ENV)
    decide_call([layer("g", ENV, read={"deny": ["read(.env)"]})], "read", {"path": line}, ENV)


def test_matching_is_a_single_pass(monkeypatch: object) -> None:
    """`* a * a * a * b` against 3,000 words: one glob test per (word, reachable item), not the
    exponential backtracking of a regex."""
    calls = 0
    original = WordGlob.matches

    def counting(self: WordGlob, word: str) -> bool:
        nonlocal calls
        calls += 1
        return original(self, word)

    monkeypatch.setattr(WordGlob, "matches", counting)  # type: ignore[attr-defined]
    a, b = WordGlob(("a",)), WordGlob(("b",))
    pattern = WordPattern((STAR, a, STAR, a, STAR, a, STAR, b))
    words = ["a"] * 3000
    assert not pattern.may_match(words)
    assert calls <= 3000 * 4


@settings(max_examples=800, deadline=None)
@given(
    pattern_items,
    st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", "ab", "c"])), max_size=6),
    st.booleans(),
)
def test_the_shortcuts_answer_as_the_full_scan(
    items: list[object], words: list[str | None], tail: bool
) -> None:
    """The simple-shape check and the literal-prefix check only skip the scan, never change
    its answer, with unknown words and open tails too."""
    pattern = WordPattern(tuple(items))  # type: ignore[arg-type]
    assert pattern.may_match(words, tail) == pattern._run(words, tail, strict=False)
    assert pattern.must_match(words, tail) == pattern._run(words, tail, strict=True)
