"""Enforce a policyctl policy inside the real nanobot agent loop (PyPI `nanobot-ai`, the
`nanobot` extra): the tool list the model sees is the run's resolution, and every call is
decided before it runs, subagents and scheduled runs included.

    from policyctl.integrations.nanobot import NanobotPolicy
    with NanobotPolicy("policy.yaml", agent="main"):
        result = await Nanobot.from_config("config.json").run("...")
"""

from .context import RunFacts, run_context
from .guard import ApprovalRequest, NanobotPolicy

__all__ = ["ApprovalRequest", "NanobotPolicy", "RunFacts", "run_context"]
