"""Each host's hook protocol, as data: the handler and the installer read this table only.

Sources (versions the catalogs describe): Claude Code 2.1.328 hooks reference; Gemini CLI
0.61.0 docs/hooks/reference.md and packages/core/src/hooks/types.ts; Codex 0.169.0
codex-rs/hooks/schema/generated/pre-tool-use.command.*.schema.json and its Hooks page.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Host:
    #: the name on the command line (`policyctl hook claude-code`)
    name: str
    #: the built-in catalog whose tool names the host's hooks report
    catalog: str
    #: the event that decides one tool call (`tool_name` + `tool_input` in the payload)
    call_event: str
    #: the event that asks for the tool list a model turn may use, if the host has one
    list_event: str | None
    #: how the host names an MCP server's tool: prefix, then server, separator, tool
    mcp_prefix: str
    mcp_separator: str
    #: whether the host honours an `ask` from a hook (else policyctl denies, saying so)
    can_ask: bool
    #: whether the host accepts a bare `allow` (Codex rejects one: silence means allow)
    can_allow: bool
    #: the exit code the host reads as "block this call" (stderr becomes the reason)
    blocking_exit: int
    #: the model provider the host talks to, when it only ever talks to one
    provider: str | None
    #: the settings file a project-scope and a user-scope install writes, and the hook's
    #: timeout unit there ("s" or "ms")
    project_settings: str
    user_settings: str
    timeout_unit: str
    #: the command that prints the host's version (`hook doctor`)
    binary: str


HOSTS: dict[str, Host] = {
    "claude-code": Host(
        name="claude-code",
        catalog="claude-code",
        call_event="PreToolUse",
        list_event=None,
        mcp_prefix="mcp__",
        mcp_separator="__",
        can_ask=True,
        can_allow=True,
        blocking_exit=2,
        provider="anthropic",
        project_settings=".claude/settings.json",
        user_settings="~/.claude/settings.json",
        timeout_unit="s",
        binary="claude",
    ),
    "gemini-cli": Host(
        name="gemini-cli",
        catalog="gemini-cli",
        call_event="BeforeTool",
        list_event="BeforeToolSelection",
        mcp_prefix="mcp_",
        mcp_separator="_",
        can_ask=True,
        can_allow=True,
        blocking_exit=2,
        provider="google",
        project_settings=".gemini/settings.json",
        user_settings="~/.gemini/settings.json",
        timeout_unit="ms",
        binary="gemini",
    ),
    "codex": Host(
        name="codex",
        catalog="codex",
        call_event="PreToolUse",
        list_event=None,
        mcp_prefix="mcp__",
        mcp_separator="__",
        can_ask=False,
        can_allow=False,
        blocking_exit=2,
        provider=None,
        project_settings=".codex/hooks.json",
        user_settings="~/.codex/hooks.json",
        timeout_unit="s",
        binary="codex",
    ),
}
