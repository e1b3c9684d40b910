"""Model: the typed, frozen policy document (pydantic, strict, unknown keys forbidden).

Key names follow OpenClaw's configuration (camelCase). Every scope that can hold a tool
policy has `allow`, `alsoAllow` and `deny`; a missing list is `None`, which is different from
an empty list (semantics 6 and 7.6 give the two different meanings).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

EntryList = list[str]


class StrictModel(BaseModel):
    """Every model of a file operators write: unknown keys are errors, no type coercion."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=False)


_Strict = StrictModel


class ToolPolicy(_Strict):
    """A scope's allow / alsoAllow / deny lists (a sender entry, a group, a sandbox...)."""

    allow: EntryList | None = None
    also_allow: EntryList | None = Field(None, alias="alsoAllow")
    deny: EntryList | None = None


class ProviderTools(ToolPolicy):
    """A `byProvider.<key>` entry: a policy plus an optional provider profile."""

    profile: str | None = None


class ScopedTools(_Strict):
    """The `sandbox` and `subagents` blocks of a tools scope: `{tools: {...}}`."""

    tools: ToolPolicy | None = None


class ToolsConfig(ToolPolicy):
    """`tools` (global) and `agents.entries.<id>.tools`: the same keys at both levels."""

    profile: str | None = None
    by_provider: dict[str, ProviderTools] | None = Field(None, alias="byProvider")
    tools_by_sender: dict[str, ToolPolicy] | None = Field(None, alias="toolsBySender")
    sandbox: ScopedTools | None = None
    subagents: ScopedTools | None = None


class SandboxSettings(_Strict):
    mode: Literal["off", "all", "non-main"] | None = None


class SubagentSettings(_Strict):
    max_spawn_depth: int | None = Field(None, alias="maxSpawnDepth", ge=1, le=16)


class AgentEntry(_Strict):
    name: str | None = None
    description: str | None = None
    tools: ToolsConfig | None = None
    sandbox: SandboxSettings | None = None


class LegacyAgentEntry(AgentEntry):
    """An item of the older `agents.list: [{id: ...}]` shape."""

    id: str


class AgentDefaults(_Strict):
    sandbox: SandboxSettings | None = None
    subagents: SubagentSettings | None = None
    tools: ToolsConfig | None = None


EntryItems = list[LegacyAgentEntry]


class Agents(_Strict):
    defaults: AgentDefaults | None = None
    entries: dict[str, AgentEntry] | None = None
    legacy_list: EntryItems | None = Field(None, alias="list")


class GroupConfig(_Strict):
    tools: ToolPolicy | None = None
    tools_by_sender: dict[str, ToolPolicy] | None = Field(None, alias="toolsBySender")


class AccountConfig(_Strict):
    groups: dict[str, GroupConfig] | None = None


class ChannelConfig(_Strict):
    groups: dict[str, GroupConfig] | None = None
    accounts: dict[str, AccountConfig] | None = None


class SessionConfig(_Strict):
    main_key: str | None = Field(None, alias="mainKey")
    scope: Literal["per-sender", "global"] | None = None


class PluginToolDecl(_Strict):
    """A plugin tool the deployment has: its name, its plugin id, and whether it is optional."""

    name: str
    plugin_id: str = Field(alias="pluginId")
    optional: bool = False


class McpServerDecl(_Strict):
    tools: list[str]


class InventoryDecl(_Strict):
    """The plugin and MCP tools a deployment really has, for offline resolution."""

    plugins: list[PluginToolDecl] | None = None
    mcp: dict[str, McpServerDecl] | None = None


class PolicyDocument(_Strict):
    """A policyctl policy file, after `extends` merging."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        json_schema_extra={"title": "policyctl policy document"},
    )

    catalog: str | None = None
    tools: ToolsConfig | None = None
    agents: Agents | None = None
    channels: dict[str, ChannelConfig] | None = None
    session: SessionConfig | None = None
    inventory: InventoryDecl | None = None


def document_json_schema() -> dict[str, object]:
    """The JSON Schema editors and CI validators read (committed under schemas/)."""
    schema = PolicyDocument.model_json_schema(by_alias=True)
    props = schema.setdefault("properties", {})
    assert isinstance(props, dict)
    props["extends"] = {
        "description": "Files this one builds on (relative paths). Mappings deep-merge, lists "
        "are replaced, deny lists are unioned.",
        "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
    }
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema
