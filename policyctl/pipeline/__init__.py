"""The resolve stage as a package whose modules are its stages; data only flows down.

    layers.py   the `Layer` enum and the one ordered table (label, name, sender-dependent)
    context.py  a `RunContext` and its session keys -> the run's trusted facts
    select.py   facts + `CompiledPolicy` -> the policy (or skip reason) of every layer
    match.py    one tool (`decide`) and a whole inventory (bitmask verdicts) under one policy
    engine.py   the `Resolver`: inventory fingerprints, bounded thread-safe caches, fast path
    result.py   `Resolution`, the audit trail built on demand, `capture()`
    warnings.py unknown-entry warnings (semantics 9), read with the trail

Nothing below `engine` holds state: the compiled policy and every value passed down are frozen.
"""
