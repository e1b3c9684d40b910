"""An executable specification of tool resolution, written from spec/semantics.md.

It reads the policy as plain data (the merged document) and the catalog as data, and decides
every tool of an inventory through the construction filters and the eleven layers, one rule at
a time, the way the semantics document words them. It shares no code with policyctl's context
parsing, layer selection, entry expansion or matching: it is the yardstick the engine is held
to in tests/test_properties.py, so a bug in the engine's shared helpers cannot hide itself.

Modules, in the order a run goes through them:
    merge.py     `extends`: deep-merge, lists replaced, deny lists unioned, base denies
                 carried into the more specific scopes a child adds (README)
    facts.py     context facts: agent, channel/account/group, sender, sandboxed, subagent role
    matching.py  normal form, globs, groups, one policy's verdict (semantics 2-6)
    layers.py    which policy each of the eleven layers applies for a context (semantics 7)
    pipeline.py  construction filters, the layers in order, the capture a child inherits
    bugs.py      where the engine is known to contradict the spec (quirks it can reproduce)
"""
