"""A stand-in hook for driving the hosts before ``policyctl hook`` exists: ``standin_hook.py HOST``.

It decides by a marker word in the call's arguments (``denied`` → deny, ``asked`` → ask,
``allowed`` → allow, none → no decision) and answers in HOST's own format, so the drivers
and the recorded payloads can be checked independently of policyctl's adapter.
"""

from __future__ import annotations

import json
import sys


def decide(tool_input: object) -> str | None:
    text = json.dumps(tool_input)
    for marker, decision in (("denied", "deny"), ("asked", "ask"), ("allowed", "allow")):
        if marker in text:
            return decision
    return None


def render(host: str, decision: str) -> dict[str, object]:
    reason = f"{decision} by the stand-in hook"
    if host == "gemini-cli":
        return {"decision": decision, "reason": reason}
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }


def main() -> int:
    host = sys.argv[1]
    decision = decide(json.load(sys.stdin).get("tool_input"))
    if decision is not None:
        print(json.dumps(render(host, decision)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
