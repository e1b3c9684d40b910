"""Agent hosts' hook protocols: what each host sends, what it reads back, and the handler.

protocols  each host's protocol as data: events, MCP naming, exit codes, provider, catalog
payload    a hook payload -> the call (tool, arguments) and the run context
handler    payload + policy + options -> `HostReply` (stdout JSON, exit code, log record)
policyfile the policy a hook reads: a bundle, or a policy file through a compiled cache
decisionlog the JSON-lines decision log
install    merging the hook entries into a host's settings file
doctor     whether an installed hook fires for every tool
"""
