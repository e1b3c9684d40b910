"""The tool contract: what a runtime tool is, and how a plain async function becomes one."""

from __future__ import annotations

import copy
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_type_hints

from ..catalog.inventory import marks_mcp
from .arguments import Acceptor
from .compiled_args import compile_acceptor
from .schema import check_tool_schema, schema_for_annotation

Execute = Callable[..., Awaitable[Any]]
#: how a tool's arguments read as a call the policy's call rules decide (see RuntimeTool)
CallView = Callable[[dict[str, Any]], Mapping[str, Any]]


@dataclass(frozen=True)
class RuntimeTool:
    """A tool the model may call.

    `read_only` tools that are not `exclusive` are concurrency-safe: consecutive calls of such
    tools run together. `plugin_id` is None for core tools. MCP tools have `bundle-mcp`, which
    only `policyctl.runtime.mcp` gives (this constructor refuses it, and the registry refuses
    a tool carrying it that the MCP code did not make).
    `parameters` is checked and copied when the tool is made (`schema.check_tool_schema`); the
    tool validates with, and advertises, that checked copy (`checked_schema`), so changing the
    dict given here, `tool.parameters` afterwards, or one `to_schema` returned never changes
    what is accepted or what the model is told. `accept` is the fast path compiled from the same
    copy (`compiled_args.py`), passed to `coerce_arguments`.

    `call_view` maps the arguments the tool receives to the arguments its call rules read,
    for a tool whose arguments are not in the catalog's form: the reference `exec` takes an
    argument vector, and its rules read a command line (`shlex.join` of the vector, whose words
    are exactly the vector's). None: the arguments as they are.
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
    call_view: CallView | None = field(default=None, compare=False)
    accept: Acceptor | None = field(init=False, repr=False, compare=False)
    checked_schema: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.plugin_id is not None and marks_mcp(self.plugin_id):
            # every `bundle-mcp` entry would grant it: only the MCP code (mcp.py) marks tools
            raise ValueError(
                f"tool {self.name!r}: the plugin id {self.plugin_id!r} marks MCP tools, which "
                "only policyctl.runtime.mcp.mcp_tools makes; a plugin's tools need its own id"
            )
        checked = check_tool_schema(self.name, self.parameters)
        object.__setattr__(self, "checked_schema", checked)
        object.__setattr__(self, "parameters", copy.deepcopy(checked))  # for reading only
        object.__setattr__(self, "accept", compile_acceptor(checked))

    @property
    def concurrency_safe(self) -> bool:
        return self.read_only and not self.exclusive

    def to_schema(self, fmt: Literal["openai", "anthropic"] = "openai") -> dict[str, Any]:
        """The definition a provider expects: OpenAI function calling, or Anthropic's tools."""
        if fmt == "anthropic":
            return {
                "name": self.name,
                "description": self.description,
                "input_schema": copy.deepcopy(self.checked_schema),
            }
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": copy.deepcopy(self.checked_schema),
            },
        }


def signature_schema(fn: Execute) -> dict[str, Any]:
    """The parameter schema a function's signature declares (`limit: int | None = None` is
    an integer or null; a parameter without a hint is a string)."""
    try:
        hints = get_type_hints(fn, include_extras=True)
    except Exception as exc:  # a hint naming something not importable at module level
        raise TypeError(
            f"{fn.__name__}: cannot read its type hints ({exc}); pass parameters=..."
        ) from None
    props: dict[str, Any] = {}
    required: list[str] = []
    open_ended = False
    for pname, param in inspect.signature(fn).parameters.items():
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            open_ended = True
            continue
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            continue  # a model's arguments are named; *args never receives any
        prop = schema_for_annotation(hints.get(pname, str), f"{fn.__name__}({pname})")
        if param.default is None and isinstance(prop.get("type"), str) and prop["type"] != "null":
            prop["type"] = [prop["type"], "null"]
        props[pname] = prop
        if param.default is inspect.Parameter.empty:
            required.append(pname)
    return {
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": open_ended,
    }


def tool(
    name: str | None = None,
    *,
    description: str | None = None,
    parameters: dict[str, Any] | None = None,
    read_only: bool = False,
    exclusive: bool = False,
    plugin_id: str | None = None,
    call_view: CallView | None = None,
) -> Callable[[Execute], RuntimeTool]:
    """Make a plain async function a tool; its signature gives the parameter schema.

    @tool(read_only=True)
    async def read_file(path: str, limit: int = 200) -> str:
        "Read a text file of the workspace."
    """

    def wrap(fn: Execute) -> RuntimeTool:
        if not inspect.iscoroutinefunction(fn):
            raise TypeError(f"{fn.__name__}: a tool's function must be async")
        schema = signature_schema(fn) if parameters is None else parameters
        doc = inspect.getdoc(fn) or ""
        return RuntimeTool(
            name or fn.__name__,
            description or doc.split("\n\n")[0],
            schema,
            fn,
            read_only,
            exclusive,
            plugin_id,
            call_view=call_view,
        )

    return wrap
