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

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "load_policy": "api",
    "load_policy_text": "api",
    "resolve": "resolve",
    "Resolver": "resolve",
    "Resolution": "resolve",
    "RemovedTool": "resolve",
    "NoCallableToolsError": "resolve",
    "cap_cron_tools": "resolve",
    "CronCap": "resolve",
    "RunContext": "context",
    "Sender": "context",
    "Capture": "context",
    "PolicyError": "diagnostics",
    "Diagnostic": "diagnostics",
    "Source": "diagnostics",
    "Tool": "inventory",
    "Inventory": "inventory",
    "CompiledPolicy": "compile",
}

__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:
    from .api import load_policy, load_policy_text
    from .compile import CompiledPolicy
    from .context import Capture, RunContext, Sender
    from .diagnostics import Diagnostic, PolicyError, Source
    from .inventory import Inventory, Tool
    from .resolve import (
        CronCap,
        NoCallableToolsError,
        RemovedTool,
        Resolution,
        Resolver,
        cap_cron_tools,
        resolve,
    )


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'policyctl' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"policyctl.{module}"), name)
    globals()[name] = value
    return value
