"""Model: the typed, frozen policy document (pydantic, strict, unknown keys forbidden).

Key names follow OpenClaw's configuration (camelCase). Every scope that can hold a tool
policy has `allow`, `alsoAllow` and `deny`; a missing list is `None`, which is different from
an empty list (semantics 6 and 7.6 give the two different meanings).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import ConfigDict, Field

from ..catalog.commandfile import CommandRow
from ..formats.strict import StrictModel

EntryList = list[str]


_Strict = StrictModel


class ToolPolicy(_Strict):
    """A scope's allow / alsoAllow / deny lists (a sender entry, a group, a sandbox...)."""

    allow: EntryList | None = Field(
        None,
        description="Only these tools survive this scope (tool names, aliases, `*` globs, "
        "`group:<name>`, plugin ids, `bundle-mcp`). `[]` means no restriction. Cannot be set "
        "together with a non-empty alsoAllow. A `tool(specifier)` entry admits the tool and "
        "restricts its calls (`exec(git *)`, `read(./src/**)`, `web_fetch(domain:x.com)`).",
    )
    also_allow: EntryList | None = Field(
        None,
        alias="alsoAllow",
        description="Entries added to the profile's allow list instead of replacing it; alone "
        "it never restricts the scope. Names only: call rules go in allow, deny or ask.",
    )
    deny: EntryList | None = Field(
        None,
        description="Tools removed in this scope whatever else allows them: deny always wins. "
        "Same entry forms as allow. A `tool(specifier)` entry keeps the tool and refuses the "
        "calls it matches.",
    )
    ask: EntryList | None = Field(
        None,
        description="Calls that need a person's approval: `tool(specifier)` entries ask for "
        "the calls they match, a plain tool name (or group) asks for every call. Never removes "
        "a tool.",
    )
    call_default: Literal["deny", "ask"] | None = Field(
        None,
        alias="callDefault",
        description="What a call gets when this scope admits its tool by `tool(specifier)` "
        "allow entries only and none of them matches: deny (default) or ask.",
    )
    expect_empty: bool | None = Field(
        None,
        alias="expectEmpty",
        description="The runs this scope applies to have no tools on purpose (a banned sender, "
        "a frozen agent): validate does not report them as empty (PC308), and reports PC309 "
        "when one of them keeps a tool.",
    )


class ProviderTools(ToolPolicy):
    """A `byProvider.<key>` entry: a policy plus an optional provider profile."""

    profile: str | None = Field(
        None,
        description="Provider profile (layer 2) for runs of this provider or provider/model: "
        "a built-in profile of the catalog or one an operator catalog defines.",
    )


class ScopedTools(_Strict):
    """The `sandbox` and `subagents` blocks of a tools scope: `{tools: {...}}`."""

    tools: ToolPolicy | None = Field(
        None, description="allow / alsoAllow / deny applied to runs of this kind."
    )


class ToolsConfig(ToolPolicy):
    """`tools` (global) and `agents.entries.<id>.tools`: the same keys at both levels."""

    profile: str | None = Field(
        None,
        description="Base tool set (layer 1): minimal, coding, messaging, full, or a profile "
        "of the catalog. An agent's profile wins over the global one. Unknown names are errors.",
    )
    by_provider: dict[str, ProviderTools] | None = Field(
        None,
        alias="byProvider",
        description='Per provider ("openai") or provider/model ("openai/gpt-5.4-mini") '
        "policies; the full model key wins over the provider, entries never merge.",
    )
    tools_by_sender: dict[str, ToolPolicy] | None = Field(
        None,
        alias="toolsBySender",
        description='Per sender policies, keyed "channel:<channel>:<id>", "id:<v>", '
        '"e164:<v>", "username:<v>", "name:<v>" or "*"; the first match wins.',
    )
    sandbox: ScopedTools | None = Field(
        None,
        description="The sandbox tool policy (layer 9), for runs the sandbox mode sandboxes; "
        "without it the catalog's default sandbox lists apply.",
    )
    subagents: ScopedTools | None = Field(
        None,
        description="Extra policy for subagent runs (layer 10), on top of the catalog's hard "
        "subagent deny list, which it cannot lift.",
    )


class SandboxSettings(_Strict):
    """When runs are sandboxed."""

    mode: Literal["off", "all", "non-main"] | None = Field(
        None,
        description='"off" (default): never; "all": always; "non-main": every run except the '
        "agent's main session (group and channel sessions are always sandboxed).",
    )


class SubagentSettings(_Strict):
    """How deep subagents may spawn subagents."""

    max_spawn_depth: int | None = Field(
        None,
        alias="maxSpawnDepth",
        ge=1,
        le=16,
        description="Deepest subagent level (default 1). Below it a subagent is an "
        "orchestrator, at it a leaf, which also loses the spawning and session tools.",
    )


class AgentEntry(_Strict):
    """One agent: its own tool policy and sandbox mode."""

    name: str | None = Field(None, description="Display name, for people; not matched.")
    description: str | None = Field(None, description="What the agent is for, for people.")
    tools: ToolsConfig | None = Field(
        None,
        description="The agent's tool policy (layers 5 and 6); its profile and alsoAllow "
        "replace the global ones.",
    )
    sandbox: SandboxSettings | None = Field(
        None, description="Overrides agents.defaults.sandbox for this agent."
    )


class LegacyAgentEntry(AgentEntry):
    """An item of the older `agents.list: [{id: ...}]` shape."""

    id: str = Field(description="The agent id, as in session keys `agent:<id>:...`.")


class AgentDefaults(_Strict):
    """Settings for every agent that does not set its own."""

    sandbox: SandboxSettings | None = Field(
        None, description="Default sandbox mode of every agent."
    )
    subagents: SubagentSettings | None = Field(None, description="Subagent spawning depth.")
    tools: ToolsConfig | None = Field(
        None, description="Tool policy for agents that have no entry of their own."
    )


EntryItems = list[LegacyAgentEntry]


class Agents(_Strict):
    """The agents of the deployment and their defaults."""

    defaults: AgentDefaults | None = Field(None, description="Defaults for every agent.")
    entries: dict[str, AgentEntry] | None = Field(
        None, description="Agents by id (the id of session keys `agent:<id>:...`)."
    )
    legacy_list: EntryItems | None = Field(
        None,
        alias="list",
        description="Older shape of entries: a list of agents with an id each. "
        "`policyctl fmt --migrate` rewrites it into entries.",
    )


class GroupConfig(_Strict):
    """A chat group's tool policy (layer 7): the group's sender rule, else its tools."""

    tools: ToolPolicy | None = Field(None, description="The policy of runs in this group.")
    tools_by_sender: dict[str, ToolPolicy] | None = Field(
        None,
        alias="toolsBySender",
        description="Per sender policies inside this group; a matching sender rule is used "
        "instead of the group's tools (first hit wins, no merging).",
    )


class AccountConfig(_Strict):
    """One account of a channel (a second bot, a second workspace)."""

    groups: dict[str, GroupConfig] | None = Field(
        None,
        description="This account's groups; they replace the channel's groups, never merge.",
    )


class ChannelConfig(_Strict):
    """A chat channel (slack, telegram, ...): its groups, per account if needed."""

    groups: dict[str, GroupConfig] | None = Field(
        None,
        description='Groups by id as written in session keys (exact, case-sensitive); "*" is '
        "every other group.",
    )
    accounts: dict[str, AccountConfig] | None = Field(
        None, description="Per account groups, replacing the channel's groups for that account."
    )


class SessionConfig(_Strict):
    """How session keys name the main session."""

    main_key: str | None = Field(
        None,
        alias="mainKey",
        description='The main session\'s key (default "main"); under sandbox mode non-main '
        "every other session is sandboxed.",
    )
    scope: Literal["per-sender", "global"] | None = Field(
        None, description='"global": one main session, keyed "global", for every sender.'
    )


class PluginToolDecl(_Strict):
    """A plugin tool the deployment has: its name, its plugin id, and whether it is optional."""

    name: str = Field(description="The tool name the model sees.")
    plugin_id: str = Field(
        alias="pluginId", description="The plugin that provides it; an entry may name it."
    )
    optional: bool = Field(
        False,
        description="An optional tool exists only when some allow list names it, its plugin "
        "or group:plugins.",
    )
    parameters: dict[str, Any] | None = Field(
        None,
        description="The tool's parameters as its plugin declares them (a JSON Schema object "
        "with `properties`); validate checks the argument keys of `name(key=glob)` call rules "
        "against it (PC441).",
    )


class McpServerDecl(_Strict):
    """One MCP server: its tools become `<server>__<tool>`."""

    tools: list[str] = Field(description="The server's tool names, as the server lists them.")


class InventoryDecl(_Strict):
    """The plugin and MCP tools a deployment really has, for offline resolution."""

    plugins: list[PluginToolDecl] | None = Field(
        None, description="Plugin tools of the deployment."
    )
    mcp: dict[str, McpServerDecl] | None = Field(
        None, description="MCP servers by name; match their tools with `<server>__*`."
    )


class PolicyDocument(_Strict):
    """A policyctl policy file, after `extends` merging."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        json_schema_extra={"title": "policyctl policy document"},
    )

    catalog: str | None = Field(
        None,
        description="The tool catalog: openclaw (default), openclaw-2026.4, nanobot, or the "
        "path of an operator catalog file.",
    )
    tools: ToolsConfig | None = Field(
        None, description="The global tool policy (layers 1 to 4, 8 to 10)."
    )
    agents: Agents | None = Field(None, description="Agents and their defaults.")
    channels: dict[str, ChannelConfig] | None = Field(
        None, description="Chat channels by name (slack, telegram, ...) and their groups."
    )
    session: SessionConfig | None = Field(
        None, description="How session keys name the main session."
    )
    inventory: InventoryDecl | None = Field(
        None,
        description="Plugin and MCP tools the deployment has, so it can be resolved offline.",
    )
    commands: dict[str, CommandRow] | None = Field(
        None,
        description="Command models that add to or replace the shipped command catalog "
        "(commands/commands.toml): how call rules read a command's options, subcommand, "
        "payload and file operands. See docs/commands.md.",
    )


def document_json_schema(
    builtin_profiles: Sequence[str] = (),
    builtin_catalogs: Sequence[str] = (),
    profiles_note: str = "",
) -> dict[str, object]:
    """The JSON Schema editors and CI validators read (committed under schemas/).

    Profile and catalog names are offered as an `enum` (editors complete them and show them
    on hover) next to a plain string: an operator catalog may define more profiles, and
    policyctl itself reports unknown ones (PC302) with the catalog in hand."""
    schema = PolicyDocument.model_json_schema(by_alias=True)
    props = schema.setdefault("properties", {})
    assert isinstance(props, dict)
    props["extends"] = {
        "description": "Files this one builds on (relative paths). Mappings deep-merge, lists "
        "are replaced, deny lists are unioned.",
        "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
    }
    scopes = [props, *(d.get("properties", {}) for d in schema.get("$defs", {}).values())]
    for scope in scopes:
        if "profile" in scope and builtin_profiles:
            _offer(
                scope["profile"],
                builtin_profiles,
                "a profile an operator catalog defines",
                profiles_note,
            )
    if builtin_catalogs:
        _offer(props["catalog"], builtin_catalogs, "the path of an operator catalog file")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def _offer(prop: dict[str, Any], names: Sequence[str], other: str, note: str = "") -> None:
    """`string | null` -> `enum of names | any other string (described) | null`."""
    prop["anyOf"] = [
        {"enum": list(names), "description": note or "built in: " + ", ".join(names)},
        {"type": "string", "description": other},
        {"type": "null"},
    ]
