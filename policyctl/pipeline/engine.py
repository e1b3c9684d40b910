"""The engine: one `Resolver` per compiled policy, owning every cache a resolve fills.

The compiled policy is immutable; everything learnt while resolving lives here, in bounded
caches that are safe under threads (`bounded.BoundedCache`: a reader sees a whole entry or
none, eviction drops a generation and cannot raise, writes lock, reads do not).

Per inventory (keyed by `Inventory.fingerprint`, a SHA-256 digest computed once per inventory
object): the index, the glob masks, the verdict of every layer policy, and the answers.
Evicting an inventory evicts everything this resolver learnt about it (its index stays in
the shared table below, bounded on its own).

Memory ceiling, with the default bounds: at most 2 x 8 inventories, each keeping at most
2 x 2,048 answers (~0.5 KB each: the audit trail is built per `Resolution`, never cached),
2 x 4,096 sender completions and verdicts (a few integers each) and its index (~0.3 KB per
tool); plus 2 x 8,192 context shapes (~2 KB each); plus, per process, 2 x 8 inventory indexes
shared by the resolvers of a catalog and 2 x 8 inventories built from plain lists
(`Inventory.of`). That is about 80 MB in the worst case for
inventories of 2,000 tools; measured: 16 such inventories with 300 contexts each keep 11 MB,
and 10,000 distinct catalog-sized inventories keep a few MB (tests/test_resolver.py).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from operator import attrgetter

from ..bounded import BoundedCache
from ..catalog.inventory import Inventory, Tool
from ..catalog.model import Catalog
from ..compile.compiled import CompiledPolicy
from ..compile.layers import PER_SENDER, LayerPlan, LayerPolicy
from ..context import COMPARED_FIELDS, RunContext, Sender, SessionInfo, parse_session_key
from ..diagnostics import Diagnostic
from ..names import Glob
from .context import Facts, derive, normalise_sender
from .match import InventoryIndex
from .result import Answer, NoCallableToolsError, Resolution
from .select import Shape, build_shape, plans_for

_KEEP = (0, 0)
#: below this many tools a glob is matched name by name (building one text costs more)
_LINES_MIN = 256


class InventoryCache:
    """What the resolver has learnt about one inventory: its index and memo tables."""

    __slots__ = (
        "_lines",
        "allowed",
        "answers",
        "base",
        "catalog",
        "globs",
        "index",
        "senders",
        "verdicts",
    )

    def __init__(self, shared: _SharedIndex, catalog: Catalog, answers: int) -> None:
        self.index = shared.index
        self.catalog = catalog
        self.globs: BoundedCache[str, int] = BoundedCache(4096)
        self.verdicts: BoundedCache[tuple[object, ...], tuple[int, int]] = BoundedCache(4096)
        self.base: BoundedCache[Shape, _ShapeVerdicts] = BoundedCache(1024)
        #: a shape completed for one sender: many session keys share a shape and a sender
        self.senders: BoundedCache[tuple[Shape, Sender], _SenderVerdicts] = BoundedCache(4096)
        self.answers: BoundedCache[RunContext, Answer] = BoundedCache(answers)
        #: allowed names per mask: thousands of contexts share a handful of answers
        self.allowed: BoundedCache[int, tuple[str, ...]] = BoundedCache(1024)
        self._lines = shared.lines

    def glob_mask(self, glob: Glob) -> int:
        found = self.globs.get(glob.pattern)
        if found is None:
            found = self.index.scan(glob, self._lines)
            self.globs.put(glob.pattern, found)
        return found

    def names_of(self, mask: int) -> tuple[str, ...]:
        found = self.allowed.get(mask)
        if found is None:
            found = self.index.names_of(mask)
            self.allowed.put(mask, found)
        return found

    def verdict(self, lp: LayerPolicy) -> tuple[int, int]:
        """Memoised by what the lists say, not by which scope wrote them."""
        allow, deny = lp.allow, lp.deny
        key = (
            allow.signature if allow is not None else None,
            deny.signature if deny is not None else None,
            lp.grants,
        )
        found = self.verdicts.get(key)
        if found is None:
            found = self.index.verdict(lp, self.catalog, self)
            self.verdicts.put(key, found)
        return found


@dataclass(frozen=True, slots=True)
class _SharedIndex:
    """An inventory seen through a catalog, with its names as one text for glob scans (worth
    it beyond `_LINES_MIN` tools). Depends on nothing else: every resolver of the catalog
    shares it, so the first resolve after a hot reload finds it built."""

    catalog: Catalog
    index: InventoryIndex
    lines: tuple[str, Mapping[int, int]] | None

    @staticmethod
    def of(inventory: Inventory, catalog: Catalog) -> _SharedIndex:
        key = (id(catalog), inventory.fingerprint)
        found = _INDEXES.get(key)
        # the entry holds its catalog, so no other catalog can have taken its id meanwhile
        if found is None or found.catalog is not catalog:
            index = InventoryIndex.build(inventory, catalog)
            lines = index.lines() if len(index.names) > _LINES_MIN else None
            found = _SharedIndex(catalog, index, lines)
            _INDEXES.put(key, found)
        return found


#: a few inventories' indexes per process (a runtime has few distinct inventories at a time)
_INDEXES: BoundedCache[tuple[int, bytes], _SharedIndex] = BoundedCache(8)


@dataclass(frozen=True, slots=True)
class _ShapeVerdicts:
    """A shape's sender-independent work over one inventory, done once.

    For a shape whose layers 7 and 8 wait for the sender, `alive` leaves those two layers
    (and the optional-plugin filter, which depends on every applied allow list) out."""

    verdicts: tuple[tuple[int, int], ...]
    alive: int
    owner: int
    provider: int
    optional: int

    @staticmethod
    def build(shape: Shape, cache: InventoryCache) -> _ShapeVerdicts:
        index = cache.index
        pending = () if shape.sender_independent else PER_SENDER
        owner = 0 if shape.facts.is_owner else index.owner_only
        provider = index.provider_mask(shape.facts.provider)
        optional = index.optional
        alive = index.full & ~(owner | provider)
        verdicts: list[tuple[int, int]] = []
        for plan in shape.plans:
            lp = plan.policy
            if plan.stage in pending or lp is None:
                verdicts.append(_KEEP)
                continue
            denied, missing = cache.verdict(lp)
            verdicts.append((denied, missing))
            alive &= ~(denied | missing)
            if optional and lp.allow is not None:
                optional &= ~index.named_mask(lp.allow)
        if not pending:
            alive &= ~optional
        return _ShapeVerdicts(tuple(verdicts), alive, owner, provider, optional)


#: a context's every compared field but the sender: equal keys derive equal facts and notes
_raw_key: Callable[[RunContext], tuple[object, ...]] = attrgetter(
    *(name for name in COMPARED_FIELDS if name != "sender")
)


_EMPTY_CONTEXT = RunContext()


class Resolver:
    """Resolves runs against one compiled policy, remembering what it learns, within bounds.

    Safe to share between threads. A hot reload replaces the policy and its resolver
    together (`PolicyStore` does), so no cache ever mixes two versions."""

    def __init__(
        self,
        policy: CompiledPolicy,
        *,
        inventories: int = 8,
        answers: int = 2048,
        shapes: int = 8192,
        weak: bool = False,
    ) -> None:
        # Held weakly when the policy's own registry made this resolver (`resolve_for`): then
        # the policy, not the resolver, decides how long both live (no cache refers to it).
        self._strong: CompiledPolicy | None = None if weak else policy
        self._weak = weakref.ref(policy)
        self._catalog = policy.catalog
        self._answers = answers
        self._inventories: BoundedCache[bytes, InventoryCache] = BoundedCache(inventories)
        self._contexts: BoundedCache[tuple[object, ...], tuple[Shape, tuple[Diagnostic, ...]]]
        self._contexts = BoundedCache(shapes)
        self._shapes: BoundedCache[Facts, Shape] = BoundedCache(shapes)
        self._keys: BoundedCache[str, SessionInfo] = BoundedCache(shapes)
        self._default = self._inventory_cache(policy.default_inventory)
        #: the inventory object resolved against last, and its cache: found by identity
        self._last: tuple[object, InventoryCache] = (policy.default_inventory, self._default)

    @property
    def policy(self) -> CompiledPolicy:
        policy = self._strong or self._weak()
        if policy is None:  # pragma: no cover - the registry drops a resolver with its policy
            raise RuntimeError("the policy of this resolver is gone")
        return policy

    def resolve(
        self,
        context: RunContext | None = None,
        inventory: Inventory | Iterable[Tool] | None = None,
        *,
        require_tools: bool = True,
    ) -> Resolution:
        """The tools this run may use, and why every other tool of the inventory is gone.

        Raises `NoCallableToolsError` when explicit allow lists leave no tools (unless
        `require_tools=False`, which `explain` uses to show such a run)."""
        return self.resolve_in(self.policy, context, inventory, require_tools)

    def resolve_in(
        self,
        policy: CompiledPolicy,
        context: RunContext | None,
        inventory: Inventory | Iterable[Tool] | None,
        require_tools: bool,
    ) -> Resolution:
        """`resolve` with this resolver's policy already in hand (`resolve` has it:
        one weak-reference read fewer on every resolve)."""
        ctx = context if context is not None else _EMPTY_CONTEXT
        if inventory is None:
            cache = self._default
        else:
            last = self._last
            if last[0] is inventory:  # a runtime resolves against the same inventory object
                cache = last[1]
            else:
                inv = (
                    inventory
                    if isinstance(inventory, Inventory)
                    else Inventory.of(inventory, self._catalog)
                )
                cache = self._inventory_cache(inv)
                if inv is inventory:
                    self._last = (inv, cache)  # one assignment: readers see a whole pair
        answers = cache.answers
        answer = answers.young_get(ctx) or answers.get(ctx)
        if answer is None:
            answer = self._answer(ctx, cache)
            answers.put(ctx, answer)
        res = Resolution(answer, policy, ctx)
        if require_tools and answer.emptied:
            raise NoCallableToolsError(res, answer.emptied)
        return res

    def run_plan(self, context: RunContext) -> tuple[Facts, tuple[LayerPlan, ...]]:
        """A run's facts and its eleven layer plans, the ones `resolve(context).plans` has,
        without deciding the run: no inventory is consulted and no answer is built (the matrix
        walk of `validate` groups thousands of contexts by their plans and decides each group
        once)."""
        shape, _ = self._shape(context)
        if shape.sender_independent:
            return shape.facts, shape.plans
        return shape.facts, plans_for(shape, normalise_sender(context.sender))

    # -- the stages ---------------------------------------------------------------------------

    def _inventory_cache(self, inv: Inventory) -> InventoryCache:
        fp = inv.fingerprint
        found = self._inventories.get(fp)
        if found is None:
            found = InventoryCache(
                _SharedIndex.of(inv, self._catalog), self._catalog, self._answers
            )
            self._inventories.put(fp, found)
        return found

    def _session_key(self, key: str) -> SessionInfo:
        found = self._keys.get(key)
        if found is None:
            found = parse_session_key(key)
            self._keys.put(key, found)
        return found

    def _shape(self, ctx: RunContext) -> tuple[Shape, tuple[Diagnostic, ...]]:
        raw = _raw_key(ctx)
        found = self._contexts.get(raw)
        if found is None:
            policy = self.policy
            facts, notes = derive(policy, ctx, self._session_key)
            shape = self._shapes.get(facts)
            if shape is None:
                shape = build_shape(policy, facts)
                self._shapes.put(facts, shape)
            found = (shape, notes)
            self._contexts.put(raw, found)
        return found

    def _answer(self, ctx: RunContext, cache: InventoryCache) -> Answer:
        shape, notes = self._shape(ctx)
        sender: Sender = normalise_sender(ctx.sender)
        key = (shape, sender)
        done = cache.senders.get(key)
        if done is None:
            done = _SenderVerdicts.build(shape, sender, cache)
            cache.senders.put(key, done)
        index = cache.index
        answer = Answer(
            self._catalog,
            index,
            ctx,
            shape,
            sender,
            done.plans,
            done.verdicts,
            done.construction,
            done.alive,
            done.allowed,
            notes,
            (),
        )
        if done.alive or not index.full:
            return answer
        # Nothing left: name the allow lists that emptied the run (none if denies did it).
        emptied = Resolution(answer, self.policy).emptied_by()
        return replace(answer, emptied=tuple(emptied))


@dataclass(frozen=True, slots=True)
class _SenderVerdicts:
    """A shape's verdicts completed for one (normalised) sender over one inventory."""

    plans: tuple[LayerPlan, ...]
    verdicts: tuple[tuple[int, int], ...]
    construction: tuple[int, int, int]
    alive: int
    allowed: tuple[str, ...]

    @staticmethod
    def build(shape: Shape, sender: Sender, cache: InventoryCache) -> _SenderVerdicts:
        base = cache.base.get(shape)
        if base is None:
            base = _ShapeVerdicts.build(shape, cache)
            cache.base.put(shape, base)
        index = cache.index
        plans: tuple[LayerPlan, ...]
        if shape.sender_independent:
            plans, verdicts, alive, optional = shape.plans, base.verdicts, base.alive, base.optional
        else:
            plans = plans_for(shape, sender)
            per_layer = list(base.verdicts)
            alive, optional = base.alive, base.optional
            for layer in PER_SENDER:
                lp = plans[layer - 1].policy
                if lp is None:
                    continue
                denied, missing = cache.verdict(lp)
                per_layer[layer - 1] = (denied, missing)
                alive &= ~(denied | missing)
                if optional and lp.allow is not None:
                    optional &= ~index.named_mask(lp.allow)
            alive &= ~optional
            verdicts = tuple(per_layer)
        return _SenderVerdicts(
            plans,
            verdicts,
            (base.owner, optional, base.provider),
            alive,
            cache.names_of(alive),
        )
