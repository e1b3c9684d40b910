"""The tool contract: what a runtime tool is, and how a plain async function becomes one."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, get_type_hints

Execute = Callable[..., Awaitable[Any]]

_JSON_TYPES: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    dict: "object",
}


@dataclass(frozen=True)
class RuntimeTool:
    """A tool the model may call.

    `read_only` tools that are not `exclusive` are concurrency-safe: consecutive calls of such
    tools run together. `plugin_id` is None for core tools; MCP tools use `bundle-mcp`.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    execute: Execute
    read_only: bool = False
    exclusive: bool = False
    plugin_id: str | None = None
    optional: bool = False
    meta: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def concurrency_safe(self) -> bool:
        return self.read_only and not self.exclusive

    def to_schema(self, fmt: Literal["openai", "anthropic"] = "openai") -> dict[str, Any]:
        """The definition a provider expects: OpenAI function calling, or Anthropic's tools."""
        if fmt == "anthropic":
            return {
                "name": self.name,
                "description": self.description,
                "input_schema": self.parameters,
            }
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


def _schema_for(annotation: Any) -> dict[str, Any]:
    origin = getattr(annotation, "__origin__", None)
    if origin is list:
        (item,) = getattr(annotation, "__args__", (str,))
        return {"type": "array", "items": _schema_for(item)}
    kind = _JSON_TYPES.get(origin or annotation)
    return {"type": kind} if kind else {}


def tool(
    name: str | None = None,
    *,
    description: str | None = None,
    parameters: dict[str, Any] | None = None,
    read_only: bool = False,
    exclusive: bool = False,
    plugin_id: str | None = None,
) -> Callable[[Execute], RuntimeTool]:
    """Make a plain async function a tool; its signature gives the parameter schema.

    @tool(read_only=True)
    async def read_file(path: str, limit: int = 200) -> str:
        "Read a text file of the workspace."
    """

    def wrap(fn: Execute) -> RuntimeTool:
        if not inspect.iscoroutinefunction(fn):
            raise TypeError(f"{fn.__name__}: a tool's function must be async")
        schema = parameters
        if schema is None:
            hints = get_type_hints(fn)
            props: dict[str, Any] = {}
            required: list[str] = []
            for pname, param in inspect.signature(fn).parameters.items():
                props[pname] = _schema_for(hints.get(pname, str))
                if param.default is inspect.Parameter.empty:
                    required.append(pname)
            schema = {
                "type": "object",
                "properties": props,
                "required": required,
                "additionalProperties": False,
            }
        doc = inspect.getdoc(fn) or ""
        return RuntimeTool(
            name or fn.__name__,
            description or doc.split("\n\n")[0],
            schema,
            fn,
            read_only,
            exclusive,
            plugin_id,
        )

    return wrap
