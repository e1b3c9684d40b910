"""The result types of a resolve, under the name consumers import them by.

They are defined with the stage that builds them, `pipeline.result`."""

from __future__ import annotations

from .pipeline.match import RuleKind
from .pipeline.result import LayerTrace, NoCallableToolsError, RemovedTool, Resolution, record

__all__ = ["LayerTrace", "NoCallableToolsError", "RemovedTool", "Resolution", "RuleKind", "record"]
