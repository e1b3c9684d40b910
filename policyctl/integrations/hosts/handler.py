"""The hook handler: a host's payload and a loaded policy in, the host's reply out.

`handle` is a pure function of (payload, policy, options): `policyctl hook` runs it once per
process, and a decision server can run the same function per HTTP request (Claude Code's
`type: "http"` hooks POST the same JSON). Whatever goes wrong inside, the reply is a refusal
in the host's own format with its blocking exit code: these hosts let a call proceed when a
hook fails in any other way, so a hook that crashed would be a hook that allowed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ...catalog.inventory import Tool
from ...context import RunContext
from ...escape import printable_line
from .decisionlog import arguments_sha256
from .payload import BadPayload, HostCall, PayloadFacts, read_call, read_facts
from .protocols import Host

if TYPE_CHECKING:
    from ...compile.compiled import CompiledPolicy
    from ...pipeline.result import Resolution

ALLOW, ASK, DENY = "allow", "ask", "deny"
DETAIL_LEVELS = ("minimal", "layer", "full")
SHOWN = 200  # characters of an entry, subject or tool name a reason quotes


@dataclass(frozen=True, slots=True)
class HostOptions:
    host: Host
    #: the run context the command line gives (`--agent`, `--channel`, ...); the payload's
    #: facts fill what it leaves empty, and the flags win where both speak
    context: RunContext = field(default_factory=RunContext)
    home: str | None = None
    refusal_detail: str = "layer"
    #: the policy's revision (a bundle's hash, a policy file's content hash) for the log
    revision: str | None = None
    log_arguments: bool = False
    #: False when nobody can answer an ask in this run (a headless or CI run, `--no-ask`):
    #: an ask is then refused, as for a host that cannot ask
    ask: bool = True


@dataclass(frozen=True, slots=True)
class HostReply:
    """What the host reads: stdout (JSON or nothing), stderr, the exit code; and the record
    the decision log writes."""

    stdout: str
    stderr: str
    exit_code: int
    record: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Decided:
    """A call's verdict and the sentence the agent reads (shared with the MCP gateway)."""

    verdict: str
    reason: str
    layer: str | None = None
    entry: str | None = None
    source: str | None = None


def handle(payload: Any, policy: CompiledPolicy, options: HostOptions) -> HostReply:
    host = options.host
    try:
        facts = read_facts(payload)
        if facts.event == host.call_event:
            call = read_call(payload, host)
            decided = _decide(call, facts, policy, options)
            record = _record(options, facts, call, decided)
            told = _as_told(host, decided, options.ask)
            if told.verdict != decided.verdict:
                record["answered"] = told.verdict  # what the host was told, beside the policy's
            return HostReply(_render(host, told), "", 0, record)
        if host.list_event is not None and facts.event == host.list_event:
            return _list_reply(host, facts, policy, options)
        expected = " or ".join(e for e in (host.call_event, host.list_event) if e)
        raise BadPayload(
            f'event "{_quote(facts.event)}" is not one policyctl decides ({expected})', "PC182"
        )
    except BadPayload as exc:
        return failure(host, exc.code, str(exc), _event_of(payload))
    except Exception as exc:  # any failure is a refusal, never a pass
        problem = f"the call could not be decided ({type(exc).__name__}: {exc})"
        return failure(host, "PC185", problem, _event_of(payload))


def _event_of(payload: Any) -> str | None:
    event = payload.get("hook_event_name") if isinstance(payload, dict) else None
    return event if isinstance(event, str) else None


def failure(host: Host, code: str, problem: str, event: str | None = None) -> HostReply:
    """The refusal for a call policyctl could not decide: in the host's format, with the
    host's blocking exit code and the reason on stderr (what the host shows on exit 2).
    `code` is the diagnostic (PC180-PC186) that names the kind of failure."""
    from ...diagnostics import CODES

    reason = f"policyctl refused the call: {code} {CODES[code].title}: {_quote(problem, 2000)}"
    decided = Decided(DENY, reason)
    record = {"host": host.name, "event": event, "verdict": DENY, "code": code, "error": reason}
    if host.list_event is not None and event == host.list_event:
        stdout = _selection(host, [])
    else:
        stdout = _render(host, decided)
    return HostReply(stdout, reason + "\n", host.blocking_exit, record)


# -- deciding ------------------------------------------------------------------------------


def run_context(facts: PayloadFacts, options: HostOptions) -> RunContext:
    """The run's context: the command line's flags first, then what the payload says."""
    given = options.context
    changes: dict[str, Any] = {}
    if given.session_key is None and facts.session_id is not None:
        changes["session_key"] = facts.session_id
    if given.workspace is None and facts.cwd is not None:
        changes["workspace"] = facts.cwd
    if given.home is None and options.home is not None:
        changes["home"] = options.home
    if given.model is None and facts.model is not None:
        changes["model"] = facts.model
    if given.provider is None and options.host.provider is not None:
        changes["provider"] = options.host.provider
    if facts.agent_type is not None:
        changes["agent"] = facts.agent_type  # the subagent's own type names its policy
    if facts.in_subagent and given.subagent_depth is None:
        changes["subagent_depth"] = 1
    return replace(given, **changes) if changes else given


def _decide(
    call: HostCall, facts: PayloadFacts, policy: CompiledPolicy, options: HostOptions
) -> Decided:
    return decide_call(call, run_context(facts, options), policy, options.refusal_detail)


def decide_call(
    call: HostCall, context: RunContext, policy: CompiledPolicy, level: str = "layer"
) -> Decided:
    """One call decided in a run context: what a hook event and a decision server's
    `/v1/decide` both ask. An unknown tool raises `BadPayload` (PC181)."""
    from ...pipeline.resolve import resolve

    inventory = policy.default_tools()
    tool = call.tool
    if call.is_mcp:
        inventory.append(Tool.mcp(tool))
    else:
        tool = policy.catalog.aliases.get(tool, tool)
        if tool not in {t.name for t in inventory}:
            raise BadPayload(
                f'"{_quote(call.host_tool)}" is not a tool of catalog "{policy.catalog.name}" '
                "(a tool policyctl does not know is refused: add it to the policy's catalog)",
                "PC181",
            )
    res = resolve(policy, context, inventory, require_tools=False)
    if tool not in res.allowed:
        return removed(res, tool, call.host_tool, level)
    return call_decision(res, tool, call.host_tool, call.arguments, level)


def removed(res: Resolution, tool: str, shown: str, level: str) -> Decided:
    """The refusal of a tool the resolution removed, naming the layer at `level`."""
    gone = res.removal(tool)
    layer = None if gone is None else gone.label
    entry = None if gone is None else gone.entry
    source = None if gone is None or gone.source is None else str(gone.source)
    text = f"policyctl: {_quote(shown)} is not allowed in this run"
    if level == "minimal":
        return Decided(DENY, text)
    if layer is not None:
        text += f": removed at {_quote(layer)}"
        if entry:
            text += f' by "{_quote(entry)}"'
        if source:
            text += f" ({_quote(source)})"
    return Decided(DENY, text, layer, entry, source)


def call_decision(
    res: Resolution, tool: str, shown: str, arguments: Mapping[str, Any], level: str
) -> Decided:
    """The call rules' verdict on `arguments` of `tool` (allowed in `res`), with its text;
    `shown` is the name the agent knows the tool by."""
    from ...explain.labels import list_label

    verdict = res.decide_call(tool, arguments).verdict
    layer = list_label(verdict)  # the list the deciding rule is written in
    effect = (ALLOW, ASK, DENY)[int(verdict.effect)]
    source = None if verdict.source is None else str(verdict.source)
    if level == "minimal":
        text = {ALLOW: "allowed", ASK: "needs approval", DENY: "is not allowed"}[effect]
        return Decided(effect, f"policyctl: this call of {_quote(shown)} {text} in this run")
    what = {ALLOW: "allowed", ASK: "needs approval", DENY: "refused"}[effect]
    text = f"policyctl: call {what}: {verdict.reason.value}"
    if verdict.entry:
        text += f' "{_quote(verdict.entry)}"'
    if layer:
        text += f" at {_quote(layer)}"
    if source:
        text += f" ({_quote(source)})"
    if level == "full" and verdict.subject:
        text += f' on "{_quote(verdict.subject)}"'
    if level == "full" and verdict.detail:
        text += f"; {_quote(verdict.detail)}"
    return Decided(effect, text, layer, verdict.entry, source)


# -- replying ------------------------------------------------------------------------------


def _as_told(host: Host, decided: Decided, ask: bool) -> Decided:
    """The verdict the host is told: an ask is a refusal that says approval is needed when
    the host cannot ask from a hook, or no one can answer in this run (`ask` False)."""
    if decided.verdict != ASK or (host.can_ask and ask):
        return decided
    why = "no one can answer in this run, --no-ask"
    if not host.can_ask:
        why = "this host cannot ask a person from a hook"
    reason = f"{decided.reason} ({why}: approval is needed)"
    return Decided(DENY, reason, decided.layer, decided.entry, decided.source)


def _render(host: Host, decided: Decided) -> str:
    """The reply on stdout for a call whose verdict the host is told, in its protocol."""
    verdict, reason = decided.verdict, decided.reason
    if verdict == ALLOW and not host.can_allow:
        return ""  # silence is the host's "no objection"
    if host.name == "gemini-cli":
        return _json({"decision": verdict, "reason": reason})
    return _json(
        {
            "hookSpecificOutput": {
                "hookEventName": host.call_event,
                "permissionDecision": verdict,
                "permissionDecisionReason": reason,
            }
        }
    )


def _selection(host: Host, names: list[str]) -> str:
    config: dict[str, Any] = {"mode": "AUTO" if names else "NONE", "allowedFunctionNames": names}
    return _json({"hookSpecificOutput": {"hookEventName": host.list_event, "toolConfig": config}})


def _list_reply(
    host: Host, facts: PayloadFacts, policy: CompiledPolicy, options: HostOptions
) -> HostReply:
    """Gemini's BeforeToolSelection: the catalog tools this run may use, by the host's names.
    MCP tools are not in the request the host sends, so they are decided call by call."""
    from ...pipeline.resolve import resolve

    res = resolve(policy, run_context(facts, options), None, require_tools=False)
    names = list(res.allowed)
    record = {
        "host": host.name,
        "event": facts.event,
        "session": facts.session_id,
        "verdict": "list",
        "allowed": names,
        "revision": options.revision,
    }
    return HostReply(_selection(host, names), "", 0, record)


def _record(
    options: HostOptions, facts: PayloadFacts, call: HostCall, decided: Decided
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "host": options.host.name,
        "event": facts.event,
        "session": facts.session_id,
        "permissionMode": facts.permission_mode,
        "tool": call.tool,
        "hostTool": call.host_tool,
        "verdict": decided.verdict,
        "layer": decided.layer,
        "entry": decided.entry,
        "source": decided.source,
        "revision": options.revision,
        "argumentsSha256": arguments_sha256(call.arguments),
    }
    if options.log_arguments:
        record["arguments"] = call.arguments
    return record


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True, separators=(",", ":")) + "\n"


def _quote(text: str | None, limit: int = SHOWN) -> str:
    shown = printable_line(text or "")
    return shown if len(shown) <= limit else shown[:limit] + "..."
