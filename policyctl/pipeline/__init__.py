"""Resolve: CompiledPolicy + context + inventory -> Resolution, a module per stage; data only
flows down. The layer vocabulary (`Layer`, `LAYERS`, `LayerPlan`) is compile's
(`compile.layers`): compile writes the plans that these modules read.

    context.py  a `RunContext` and its session keys -> the run's trusted facts; the sender's
                normal form and the keys it may match
    select.py   facts + `CompiledPolicy` -> the policy (or skip reason) of every layer
    match.py    one tool (`decide`) and a whole inventory (bitmask verdicts) under one policy
    engine.py   the `Resolver`: inventory fingerprints, bounded thread-safe caches, fast path
    result.py   `Resolution`, the audit trail built on demand, `capture()`
    warnings.py unknown entries (semantics 9) and unknown context values (PC450-PC454)
    calls.py    the run's call layers: each applied policy's call rules for the allowed tools
    resolve.py  `resolve(policy, ctx, inventory)`, the public entry point; cron caps; the
                context warnings of a caller's context
    lineage.py  the contexts of a run's children (subagents, cron jobs, memory flushes)

Nothing below `engine` holds state: the compiled policy and every value passed down are frozen.
"""
