"""The catalog file format: what an operator's catalog file may hold (pydantic, strict).

Only files read from outside the package are validated with these models (operator catalogs,
the catalogs a bundle carries) and `policyctl schema catalog` is generated from them. The
built-in catalogs under `profiles/` are policyctl's own data: the runtime reads them without
building these models, and tests/test_startup.py checks each of them against `CatalogFile`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ..formats.strict import StrictModel as _Strict


class ToolRow(_Strict):
    id: str
    section: str
    profiles: list[str] = []
    groups: list[str] = []
    section_group: bool = True
    owner_only: bool = False
    read_only: bool = False
    exclusive: bool = False
    providers: list[str] | None = None
    description: str | None = None
    #: what `tool(specifier)` call rules read (see policyctl/callrules): the argument kind
    #: and the argument that holds it; `cwd_key` is the argument naming the working directory
    argument_kind: Literal["shell", "path", "patch", "url"] | None = None
    argument_key: str | None = None
    cwd_key: str | None = None

    @model_validator(mode="after")
    def _kind_needs_key(self) -> ToolRow:
        if (self.argument_kind is None) != (self.argument_key is None):
            raise ValueError("argument_kind and argument_key go together: give both or neither")
        if self.cwd_key is not None and self.argument_kind is None:
            raise ValueError("cwd_key needs argument_kind")
        return self


class GrantRow(_Strict):
    tool: str
    when_allowed: str
    unless_denied: bool = False


#: what a patch does to each file it names (`callrules.patch.patch_operations`)
PatchOperation = Literal["add", "update", "delete", "move_from", "move_to", "copy_from", "copy_to"]


class RelationRow(_Strict):
    """Calls of `tool` are also calls of `acts_as`: every call rule of `acts_as` (allow, ask,
    deny, at every layer) decides them too, over the paths `paths` names.

    `paths = "argument"`: the path in the argument `key` (default: the tool's `argument_key`),
    e.g. `edit` reads the file it edits. `paths = "patch"`: each file the patch touches (the
    tool's argument kind is `patch`), restricted to `operations` when given."""

    tool: str
    acts_as: str
    paths: Literal["argument", "patch"]
    key: str | None = None
    operations: list[PatchOperation] | None = None
    description: str | None = None

    @model_validator(mode="after")
    def _fits(self) -> RelationRow:
        if self.operations is not None and self.paths != "patch":
            raise ValueError('operations go with paths = "patch"')
        if self.key is not None and self.paths != "argument":
            raise ValueError('key goes with paths = "argument"')
        if self.operations == []:
            raise ValueError("operations is empty: leave it out to map every operation")
        return self


class ProfileRow(_Strict):
    tools: list[str] | None = None
    also: list[str] = []


class SandboxRow(_Strict):
    allow: list[str] = []
    deny: list[str] = []


class SubagentRow(_Strict):
    deny_always: list[str] = []
    deny_leaf: list[str] = []


class CatalogFile(_Strict):
    name: str
    description: str | None = None
    provenance: str | None = None
    extends: str | None = None
    tools: list[ToolRow] = []
    aliases: dict[str, str] = {}
    covers: dict[str, list[str]] = {}
    grants: list[GrantRow] = []
    relations: list[RelationRow] = []
    deny_implies: dict[str, list[str]] = {}
    owner_only: list[str] = []
    image_tool: str | None = None
    memory_flush_tools: list[str] = Field(default_factory=lambda: ["read", "write"])
    profiles: dict[str, ProfileRow] = {}
    provider_aliases: dict[str, str] = {}
    sandbox: SandboxRow | None = None
    subagents: SubagentRow | None = None
    #: the tools a shell line's redirections are decided as (`echo x > f` writes f)
    call_read_tool: str | None = None
    call_write_tool: str | None = None
