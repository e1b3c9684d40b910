"""Document: one policy file and everything it `extends` -> one typed, validated document.

extends    the files read and merged, with every value's file:line:col kept
merge      deep merge on normalised keys; deny lists unioned
carry      base denies carried into the more specific scopes a child adds
floors     scalars that gate a deny layer only narrow across `extends`
keys       normal forms of map keys; legacy `agents.list` migrated
sizes      the limits on agents, sender keys and entries (PC117)
lookalike  ids of one map that look alike (PC312)
model      `PolicyDocument`, the strict pydantic model, and its JSON Schema
validate   merged data -> `PolicyDocument`, or every schema error, located
"""
