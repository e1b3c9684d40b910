"""policyctl: declarative tool policy for AI agents.

    from policyctl import load_policy, resolve, RunContext, Sender

    policy = load_policy("policy.yaml")
    run = resolve(policy, RunContext(agent="coder", provider="openai",
                                     sender=Sender(id="42")))
    run.allowed            # the tools this run may use, in inventory order
    run.removal("exec")    # why exec is gone: layer, entry, file:line:col

Heavy modules are imported on first use, so `policyctl --version` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS = {
    "load_policy": "api",
    "load_policy_text": "api",
    "resolve": "pipeline.resolve",
    "Resolver": "pipeline.engine",
    "Resolution": "pipeline.result",
    "RemovedTool": "pipeline.result",
    "NoCallableToolsError": "pipeline.result",
    "cap_cron_tools": "pipeline.resolve",
    "CronCap": "pipeline.resolve",
    "RunContext": "context",
    "Sender": "context",
    "Capture": "context",
    "PolicyError": "diagnostics",
    "Diagnostic": "diagnostics",
    "Source": "diagnostics",
    "Tool": "catalog.inventory",
    "Inventory": "catalog.inventory",
    "CompiledPolicy": "compile.compiled",
}

__all__ = [
    "Capture",
    "CompiledPolicy",
    "CronCap",
    "Diagnostic",
    "Inventory",
    "NoCallableToolsError",
    "PolicyError",
    "RemovedTool",
    "Resolution",
    "Resolver",
    "RunContext",
    "Sender",
    "Source",
    "Tool",
    "__version__",
    "cap_cron_tools",
    "load_policy",
    "load_policy_text",
    "resolve",
]

if TYPE_CHECKING:  # what type checkers see; at run time each name is imported on first use
    from .api import load_policy, load_policy_text
    from .catalog.inventory import Inventory, Tool
    from .compile.compiled import CompiledPolicy
    from .context import Capture, RunContext, Sender
    from .diagnostics import Diagnostic, PolicyError, Source
    from .pipeline.engine import Resolver
    from .pipeline.resolve import CronCap, cap_cron_tools, resolve
    from .pipeline.result import NoCallableToolsError, RemovedTool, Resolution
else:
    __getattr__ = lazy_exports(__name__, _EXPORTS, globals())
