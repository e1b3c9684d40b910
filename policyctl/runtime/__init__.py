"""The agent runtime the compiled policy feeds: tools, registry, call gate, loop, entry points.

registry = ToolRegistry(make_builtin_tools("workspace"))
runtime = Runtime(load_policy("policy.yaml"), registry, ScriptedProvider([...]))
# or, serving the live policy: Runtime(PolicyStore("policy.yaml").start(), registry, provider)
result = await runtime.run_turn(RunContext(agent="coder"), "fix the tests")
"""

from .agent import RunResult, run_loop
from .approvals import Approval, Approver, SessionGrants
from .arguments import (
    ArgumentError,
    ArgumentProblem,
    cast_arguments,
    check_arguments,
    coerce_arguments,
    parse_arguments,
)
from .builtin_tools import make_builtin_tools
from .callcheck import CallDecider, CallRefused, recheck
from .entrypoints import CronJob, Runtime, SpawnRefused
from .gate import CallGate, Outcome, Veto
from .hooks import Block, RequireApproval, RewriteParams, ToolCallEvent
from .loopdetect import LoopConfig, LoopDetector, LoopVerdict
from .plugins import PluginTools
from .providers import (
    OpenAICompatProvider,
    ProviderError,
    ProviderResponse,
    ScriptedProvider,
    ToolCall,
)
from .registry import CallError, PreparedCall, RefusalDetail, ToolRegistry
from .schema import SchemaError, check_tool_schema, schema_for_annotation
from .store import PolicyStore, PolicyUnavailable
from .tools import RuntimeTool, tool

__all__ = [
    "Approval",
    "Approver",
    "ArgumentError",
    "ArgumentProblem",
    "Block",
    "CallDecider",
    "CallError",
    "CallGate",
    "CallRefused",
    "CronJob",
    "LoopConfig",
    "LoopDetector",
    "LoopVerdict",
    "OpenAICompatProvider",
    "Outcome",
    "PluginTools",
    "PolicyStore",
    "PolicyUnavailable",
    "PreparedCall",
    "ProviderError",
    "ProviderResponse",
    "RefusalDetail",
    "RequireApproval",
    "RewriteParams",
    "RunResult",
    "Runtime",
    "RuntimeTool",
    "SchemaError",
    "ScriptedProvider",
    "SessionGrants",
    "SpawnRefused",
    "ToolCall",
    "ToolCallEvent",
    "ToolRegistry",
    "Veto",
    "cast_arguments",
    "check_arguments",
    "check_tool_schema",
    "coerce_arguments",
    "make_builtin_tools",
    "parse_arguments",
    "recheck",
    "run_loop",
    "schema_for_annotation",
    "tool",
]
