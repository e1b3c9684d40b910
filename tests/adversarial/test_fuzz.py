"""Fuzzing the loader and the compiler: any input ends in a valid policy or in diagnostics with
a location, within a time bound. Never another exception, never a hang."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policyctl import PolicyError, load_policy, load_policy_text, resolve

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent.parent / "examples"
EXAMPLES_RUN = int(os.environ.get("POLICYCTL_FUZZ_EXAMPLES", "300"))
FUZZ = settings(
    max_examples=EXAMPLES_RUN,
    deadline=2000,
    derandomize=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

KEYS = [
    "catalog",
    "tools",
    "agents",
    "channels",
    "session",
    "inventory",
    "profile",
    "allow",
    "alsoAllow",
    "deny",
    "byProvider",
    "toolsBySender",
    "sandbox",
    "subagents",
    "entries",
    "defaults",
    "list",
    "groups",
    "accounts",
    "mode",
    "maxSpawnDepth",
    "mainKey",
    "scope",
    "plugins",
    "mcp",
    "name",
    "pluginId",
    "optional",
    "id",
    "extends",
    "denny",
    "",
]

entries = st.one_of(
    st.sampled_from(
        [
            "exec",
            "read",
            "*",
            "group:fs",
            "group:plugins",
            "bundle-mcp",
            "web_*",
            "bash",
            "EXEC ",
            "\u0435xec",
            "ex\u200bec",
            "*a*a*a*a*a*a*a*a*b",
            "a" * 300,
        ]
    ),
    st.text(max_size=30),
    st.text(alphabet="*ab_:-", max_size=60),
)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 70), st.floats(allow_nan=False), entries
)
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6),
        st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=8)), inner, max_size=6),
    ),
    max_leaves=60,
)
shaped = st.fixed_dictionaries(
    {},
    optional={
        "catalog": st.sampled_from(["openclaw", "nanobot", "openclaw-2026.4", "nope", "x.toml"]),
        "tools": st.fixed_dictionaries(
            {},
            optional={
                "profile": st.sampled_from(["coding", "minimal", "full", "codng"]),
                "allow": st.lists(entries, max_size=5),
                "alsoAllow": st.lists(entries, max_size=5),
                "deny": st.lists(entries, max_size=5),
                "toolsBySender": st.dictionaries(
                    st.text(max_size=12),
                    st.fixed_dictionaries({}, optional={"deny": st.lists(entries, max_size=3)}),
                    max_size=3,
                ),
            },
        ),
        "agents": st.fixed_dictionaries(
            {},
            optional={
                "entries": st.dictionaries(
                    st.text(max_size=6),
                    st.fixed_dictionaries(
                        {},
                        optional={
                            "tools": st.fixed_dictionaries(
                                {}, optional={"deny": st.lists(entries, max_size=3)}
                            )
                        },
                    ),
                    max_size=3,
                )
            },
        ),
    },
)


def _check(text: str, name: str) -> None:
    try:
        policy = load_policy_text(text, name)
    except PolicyError as exc:
        assert exc.diagnostics, "an error must carry diagnostics"
        assert any(d.source is not None for d in exc.diagnostics), [str(d) for d in exc.diagnostics]
        return
    resolve(policy, None, require_tools=False).to_json()  # a valid policy must resolve too


def _yaml(value: Any) -> str:
    from io import StringIO

    from ruamel.yaml import YAML

    out = StringIO()
    YAML(typ="safe", pure=True).dump(value, out)
    return out.getvalue()


@FUZZ
@given(st.one_of(documents, shaped))
def test_random_documents_as_json_and_yaml(doc: Any) -> None:
    _check(json.dumps(doc), "fuzz.json")
    _check(_yaml(doc), "fuzz.yaml")


@FUZZ
@given(st.text(max_size=400))
def test_random_text_as_every_format(text: str) -> None:
    for name in ("fuzz.yaml", "fuzz.toml", "fuzz.json"):
        _check(text, name)


SEEDS = [
    (p.name, p.read_bytes())
    for p in sorted(EXAMPLES.glob("*"))
    if p.suffix in (".yaml", ".toml") and ".test." not in p.name
]


@FUZZ
@given(
    st.sampled_from(SEEDS),
    st.lists(
        st.tuples(
            st.integers(0, 10**6), st.integers(0, 255), st.sampled_from(["set", "insert", "delete"])
        ),
        min_size=1,
        max_size=8,
    ),
)
def test_mutated_examples(seed: tuple[str, bytes], edits: list[tuple[int, int, str]]) -> None:
    name, data = seed
    buf = bytearray(data)
    for pos, byte, op in edits:
        pos %= max(len(buf), 1)
        if op == "set" and buf:
            buf[pos] = byte
        elif op == "insert":
            buf.insert(pos, byte)
        elif buf:
            del buf[pos]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(bytes(buf))
        try:
            policy = load_policy(path)
        except PolicyError as exc:
            assert any(d.source is not None for d in exc.diagnostics), [
                str(d) for d in exc.diagnostics
            ]
            return
        resolve(policy, None, require_tools=False).to_json()


def test_corpus_of_inputs_that_once_failed() -> None:
    """Inputs fuzzing found problems with; each must now load or fail with a located diagnostic."""
    cases = sorted(p for p in (HERE / "corpus").glob("*") if p.suffix != ".md")
    assert cases, "the corpus is empty"
    for path in cases:
        text = path.read_bytes().decode("utf-8", errors="surrogateescape")
        if path.suffix == ".bin":
            with tempfile.TemporaryDirectory() as tmp:
                target = Path(tmp) / path.stem
                target.write_bytes(path.read_bytes())
                try:
                    load_policy(target)
                except PolicyError as exc:
                    assert any(d.source for d in exc.diagnostics), path
            continue
        _check(text, path.name)
