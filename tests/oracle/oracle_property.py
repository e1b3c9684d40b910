"""The oracle's property: what bash really did is never more restricted than policyctl's answer.

For each policy below, a line's *observed* strictness is the strictest deny or ask rule that
something bash really did meets: an executed argv (and each git built-in git traced) matched as
a command by policyctl's own pattern matcher, the trusted part; and a file the shell itself
opened (a redirection: the open happens in the forked shell before the command starts) or
`tee` opened, decided as a read or write call. policyctl's decision for the whole line must be
at least that strict (deny > ask > allow; a line policyctl cannot analyse gets the scope's
`callDefault`, deny here unless a policy says `ask`). A line policyctl denies or asks for is
never a counterexample of an ask, and a denied one never of anything.

Out of the property, as docs/call-rules.md says call rules do not cover them: files other
programs open because an argument names them (`cat .env`), and what interpreters run from
their own languages. Both are left out by what is observed, not by reading the line.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass
from functools import cache
from typing import Any

from oracle_harness import Recording

from policyctl import RunContext, resolve
from policyctl.api import load_policy_text
from policyctl.callrules import Effect, Reason, Roots, compile_rule, environment_for
from policyctl.callrules.values import Part
from policyctl.catalog.load import builtin_catalog

# Programs whose own opens are redirections (the shell, before `exec`) or `tee`'s file
# arguments, which the contract counts as writes (docs/call-rules.md, "Shell commands").
REDIRECTING = frozenset({"bash", "sh", "dash", "rbash", "tee"})

# Idioms from docs/call-rules.md and README.md, each with the read and write tools in the run.
PATHS = {"deny": ["read(.env)", "write(.env)"], "allow": ["read", "write"]}
POLICIES: dict[str, dict[str, list[str] | str]] = {
    # "git allowed, push asks", rm refused
    "git-push-asks": {
        "allow": ["exec(git *)", *PATHS["allow"]],
        "ask": ["exec(git push *)"],
        "deny": ["exec(rm *)", *PATHS["deny"]],
    },
    # exec open by name, rm refused by name and by path, push asks
    "rm-denied": {
        "allow": ["exec", *PATHS["allow"]],
        "ask": ["exec(git push *)"],
        "deny": ["exec(rm *)", "exec(*/rm *)", *PATHS["deny"]],
    },
    # "rm refused, everything else asks"
    "rm-refused-rest-asks": {
        "allow": PATHS["allow"],
        "ask": ["exec"],
        "deny": ["exec(rm *)", "exec(*/rm *)", *PATHS["deny"]],
    },
    # "git allowed, everything else asks"
    "git-rest-asks": {
        "allow": ["exec(git *)", *PATHS["allow"]],
        "ask": ["exec(git push *)"],
        "deny": ["exec(rm *)", "exec(*/rm *)", *PATHS["deny"]],
        "callDefault": "ask",
    },
}


@dataclass(frozen=True, slots=True)
class Finding:
    """A counterexample: bash did something a rule refuses more strictly than policyctl did."""

    policy: str
    line: str
    decided: Effect
    why: str
    observed: Effect
    evidence: str

    def __str__(self) -> str:
        return (
            f"[{self.policy}] {self.line!r}: policyctl says {self.decided.label} ({self.why}) "
            f"but bash did {self.evidence}, which is {self.observed.label}"
        )


@cache
def compiled(name: str) -> Any:
    doc = {"catalog": "openclaw", "tools": {"profile": "coding", **POLICIES[name]}}
    return load_policy_text(json.dumps(doc), f"{name}.json")


@cache
def _exec_rules(name: str) -> tuple[Any, ...]:
    env = environment_for(builtin_catalog("openclaw"), Roots(None, None))
    spec = env.spec("exec")
    rules = POLICIES[name]
    return tuple(
        compile_rule(entry, effect, spec)
        for key, effect in (("deny", Effect.DENY), ("ask", Effect.ASK))
        for entry in rules.get(key, ())
        if isinstance(entry, str) and entry.startswith("exec(")
    )


def decide(name: str, line: str, workspace: str, home: str) -> tuple[Effect, str]:
    run = resolve(compiled(name), RunContext(workspace=workspace, home=home), require_tools=False)
    verdict = run.decide_call("exec", {"command": line}).verdict
    return verdict.effect, f"{verdict.reason.value} {verdict.entry or ''}".strip()


def observed(name: str, rec: Recording) -> tuple[Effect, str]:
    """The strictest deny or ask rule that what really ran meets, and what met it."""
    worst, evidence = Effect.ALLOW, ""
    roots = Roots(rec.workspace, rec.home)
    commands = [("ran", a) for a in rec.executed[1:]]  # [0] is bash -c LINE itself
    commands += [("git ran the built-in", a) for a in rec.git_builtins]
    for what, argv in commands:
        if not argv:
            continue
        part = Part({}, " ".join(argv), roots, words=argv)
        for rule in _exec_rules(name):
            if rule.effect > worst and rule.matcher.matches(part, False):
                worst, evidence = rule.effect, f"{what} `{shlex.join(argv)}` ({rule.entry})"
    if worst is Effect.DENY:
        return worst, evidence
    run = resolve(
        compiled(name), RunContext(workspace=rec.workspace, home=rec.home), require_tools=False
    )
    for access in rec.accesses:
        if access.program not in REDIRECTING:
            continue
        tools = [t for t, on in (("read", access.read), ("write", access.write)) if on]
        for tool in tools:
            verdict = run.decide_call(tool, {"path": access.absolute}).verdict
            rule_based = verdict.reason in (Reason.DENY_RULE, Reason.ASK_RULE)
            if rule_based and verdict.effect > worst:
                worst = verdict.effect
                evidence = f"{access.program} opened {access.path} to {tool} ({verdict.entry})"
    return worst, evidence


# Admits every command by name and has one rule that meets nothing: a line gets `deny` by
# "cannot be analysed" here exactly when some part of it cannot be analysed.
POLICIES["probe"] = {"allow": ["exec", *PATHS["allow"]], "deny": ["exec(oracle-meets-nothing)"]}


def unanalysable(line: str, workspace: str, home: str) -> bool:
    context = RunContext(workspace=workspace, home=home)
    run = resolve(compiled("probe"), context, require_tools=False)
    return run.decide_call("exec", {"command": line}).verdict.reason is Reason.UNANALYSABLE


def by_contract(name: str, finding: Finding, rec: Recording) -> bool:
    """The one excuse, from the contract (call-rules.md, "Shell commands"): a line that cannot
    be analysed gets its scope's callDefault, so under `callDefault: ask` it asks even when
    what it ran is denied; the person asked sees the whole line. A file the line names in a
    redirection is no such case (deny rules must meet the parts that parsed)."""
    return (
        POLICIES[name].get("callDefault") == "ask"
        and finding.decided is Effect.ASK
        and " opened " not in finding.evidence
        and unanalysable(rec.line, rec.workspace, rec.home)
    )


def findings(rec: Recording, policies: tuple[str, ...] = ()) -> list[Finding]:
    """Every policy under which policyctl's answer for `rec.line` is weaker than reality's."""
    out = []
    for name in policies or tuple(n for n in POLICIES if n != "probe"):
        decided, why = decide(name, rec.line, rec.workspace, rec.home)
        if decided is Effect.DENY:
            continue
        seen, evidence = observed(name, rec)
        if seen > decided:
            finding = Finding(name, rec.line, decided, why, seen, evidence)
            if not by_contract(name, finding, rec):
                out.append(finding)
    return out


def example_count(default: int) -> int:
    """POLICYCTL_ORACLE_EXAMPLES raises the generated sample (5000 for a long local run)."""
    return int(os.environ.get("POLICYCTL_ORACLE_EXAMPLES", default))
