"""The engine's promises: an immutable compiled policy, a resolver whose caches are bounded,
shared by inventory content, and safe under threads."""

from __future__ import annotations

import dataclasses
import gc
import threading
import tracemalloc
from pathlib import Path
from types import MappingProxyType

import pytest
from conftest import EXAMPLES

from policyctl import Capture, Inventory, RunContext, Sender, Tool, load_policy, resolve
from policyctl.api import load_policy_text
from policyctl.bounded import BoundedCache
from policyctl.pipeline.engine import Resolver

SCENARIO = EXAMPLES / "team.yaml"


def contexts(n: int) -> list[RunContext]:
    agents = [None, "coder", "reviewer", "docs", "nobody"]
    keys = [None, "agent:coder:main", "agent:coder:subagent:s1", "agent:docs:slack:group:C1"]
    out = []
    for i in range(n):
        out.append(
            RunContext(
                agent=agents[i % len(agents)],
                provider=("openai", "anthropic", None)[i % 3],
                session_key=keys[(i // 5) % len(keys)],
                sender=Sender(id=str(i % 97)),
                is_owner=i % 11 == 0,
                parent=Capture(None, ("exec",)) if i % 7 == 0 else None,
            )
        )
    return out


def inventories(policy: object, n: int) -> list[Inventory]:
    base = list(policy.default_inventory.tools)  # type: ignore[attr-defined]
    return [
        Inventory.build([*base, Tool.mcp(f"srv{i}__tool")], policy.catalog)  # type: ignore[attr-defined]
        for i in range(n)
    ]


def test_the_compiled_policy_is_frozen_and_holds_no_cache() -> None:
    policy = load_policy(SCENARIO)
    assert not hasattr(policy, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.root = "x"  # type: ignore[misc]
    for name in ("agents", "channels", "layers"):
        assert isinstance(getattr(policy, name), MappingProxyType), name
    before = repr(policy)
    for ctx in contexts(50):
        resolve(policy, ctx, require_tools=False)
    assert repr(policy) == before


def test_the_catalog_a_policy_holds_is_read_only_for_every_later_load(tmp_path: Path) -> None:
    # one built-in catalog object serves every policy of the process: writing into one
    # policy's catalog would change what every later load compiles to
    path = tmp_path / "p.yaml"
    path.write_text('catalog: openclaw\ntools:\n  deny: ["group:runtime"]\n', encoding="utf-8")
    catalog = load_policy(path).catalog
    with pytest.raises(dataclasses.FrozenInstanceError):
        catalog.groups = {}  # type: ignore[misc]
    for name in ("aliases", "covers", "grants", "deny_implies", "provider_aliases", "groups"):
        with pytest.raises(TypeError):
            getattr(catalog, name)["group:runtime"] = ("process",)
    for name in ("profiles", "by_id"):
        with pytest.raises(TypeError):
            getattr(catalog, name)["x"] = ()
    for f in catalog.files:
        with pytest.raises(TypeError):
            f["tools"] = []  # type: ignore[index]
    assert "exec" not in resolve(load_policy(path), require_tools=False).allowed
    assert catalog.definition == load_policy(path).catalog.definition  # still what bundles carry


def test_equal_inventories_share_the_work() -> None:
    policy = load_policy(SCENARIO)
    resolver = Resolver(policy)
    tools = list(policy.default_inventory.tools)
    one, two = Inventory.build(tools, policy.catalog), Inventory.build(tools, policy.catalog)
    assert one is not two and one.fingerprint == two.fingerprint
    ctx = RunContext(agent="coder", provider="openai")
    a = resolver.resolve(ctx, one)
    b = resolver.resolve(ctx, two)
    assert a.allowed is b.allowed  # the same cached answer, found by fingerprint
    other = Inventory.build(tools[:-1], policy.catalog)
    assert other.fingerprint != one.fingerprint
    assert resolver.resolve(ctx, other).allowed != a.allowed or tools[-1].name not in a.allowed


def test_bounded_cache_keeps_at_most_two_generations() -> None:
    cache: BoundedCache[int, int] = BoundedCache(4)
    for i in range(100):
        cache.put(i, i)
        assert len(cache) <= 8
    assert cache.get(99) == 99 and cache.get(0) is None


def test_threads_give_the_answers_of_one_thread_and_raise_nothing() -> None:
    """8 threads over 40 inventories (more than the resolver keeps) and 400 contexts."""
    policy = load_policy(SCENARIO)
    invs = inventories(policy, 40)
    ctxs = contexts(400)
    work = [(c, invs[(i * 7) % len(invs)]) for i, c in enumerate(ctxs)]
    expected = [
        resolve(load_policy(SCENARIO), c, inv, require_tools=False).allowed for c, inv in work
    ]
    resolver = Resolver(policy, inventories=4, answers=64, shapes=16)  # small: evict a lot
    errors: list[BaseException] = []
    mismatches: list[int] = []

    def worker(offset: int) -> None:
        try:
            for round_ in range(2):
                for j in range(len(work)):
                    k = (j + offset * 31 + round_ * 17) % len(work)
                    c, inv = work[k]
                    res = resolver.resolve(c, inv, require_tools=False)
                    if res.allowed != expected[k]:
                        mismatches.append(k)
                    if j % 50 == 0:
                        assert res.layers and res.removed is not None  # the trail, too
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert not mismatches


def test_ten_thousand_inventories_keep_the_caches_bounded() -> None:
    """A runtime that rebuilds its inventory on every registry change must not leak."""
    policy = load_policy_text(
        "catalog: nanobot\ntools: {deny: [exec]}\n"
        "agents: {entries: {coder: {tools: {allow: [read_file, 'srv*']}}}}\n"
    )
    resolver = Resolver(policy)
    base = list(policy.default_inventory.tools)
    ctx = RunContext(agent="coder", provider="openai", sender=Sender(id="1"))
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.take_snapshot()
        for i in range(10_000):
            inv = Inventory.build([*base, Tool.mcp(f"srv{i}__tool")], policy.catalog)
            resolver.resolve(ctx, inv, require_tools=False)
        del inv
        gc.collect()
        grown = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(start, "filename"))
    finally:
        tracemalloc.stop()
    assert grown < 50 * 1024 * 1024, f"{grown / 1e6:.1f} MB kept"
    assert len(resolver._inventories) <= 16


def test_a_reload_swaps_policy_and_resolver_together(tmp_path: object) -> None:
    from pathlib import Path

    from policyctl.runtime.store import PolicyStore

    path = Path(str(tmp_path)) / "policy.yaml"
    path.write_text("catalog: openclaw\ntools: {deny: [exec]}\n", encoding="utf-8")
    store = PolicyStore(path)
    first = store._serving
    assert first is not None and first[0] is store.current
    assert not store.resolve(RunContext()).is_allowed("exec")
    path.write_text("catalog: openclaw\ntools: {deny: [write]}\n", encoding="utf-8")
    assert store.reload()
    second = store._serving
    assert second is not None and second[0] is store.current
    assert second[1] is not first[1] and second[1].policy is second[0]
    assert store.resolve(RunContext()).is_allowed("exec")


def test_a_dropped_policy_takes_its_caches_with_it() -> None:
    """`resolve(policy, ...)` keeps the policy's resolver only as long as the policy lives,
    so a process that reloads policies does not keep every old version's caches."""
    import weakref

    from policyctl.pipeline.resolve import _resolvers

    policy = load_policy_text("catalog: openclaw\ntools: {deny: [exec]}\n")
    resolve(policy, RunContext(sender=Sender(id="1")))
    resolve(load_policy_text("catalog: openclaw\n"), RunContext())  # another becomes "last"
    ref = weakref.ref(policy)
    count = len(_resolvers)
    del policy
    gc.collect()
    assert ref() is None
    assert len(_resolvers) < count


def test_a_scan_of_the_names_agrees_with_matching_each_name() -> None:
    """Long inventories match `head*tail` globs by one scan of the names as one text; heads
    and tails that overlap in a short name (`ab*ba` is not `aba`) included."""
    import random

    from policyctl.catalog.load import builtin_catalog
    from policyctl.names import Glob
    from policyctl.pipeline.match import InventoryIndex

    catalog = builtin_catalog("openclaw")
    rnd = random.Random(3)
    names = sorted({"".join(rnd.choices("ab_", k=rnd.randint(1, 7))) for _ in range(1500)})
    index = InventoryIndex.build(Inventory.build([Tool(n, "p") for n in names], catalog), catalog)
    assert len(index.names) > 256
    lines = index.lines()
    for _ in range(2000):
        glob = Glob.compile("".join(rnd.choices("ab_*", k=rnd.randint(1, 5))))
        assert index.scan(glob, lines) == index.scan(glob, None), glob.pattern
