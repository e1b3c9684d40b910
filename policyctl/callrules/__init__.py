"""Call rules: allow, ask and deny over what a tool is called with (core; not yet enforced).

Stages, a module each: `specifiers` (entry text -> compiled `Rule`, with `shell_pattern`,
`paths`, `urls`, `keyed` per argument kind), `shell` + `commands` (a command line -> its simple
commands, file accesses and unanalysable parts), `subject` (a call -> the parts to decide,
once per call), `decide` (one layer's verdict, the run's verdict). The data is in `model`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .decide import decide_call, decide_layer, decide_part, most_restrictive
    from .model import (
        ArgumentKind,
        ArgumentSpec,
        CallDecision,
        Effect,
        LayerCallRules,
        Reason,
        Rule,
        SpecifierError,
        SpecifierProblem,
        ToolCallRules,
        Verdict,
    )
    from .paths import Roots
    from .specifiers import compile_rule, has_specifier, split_entry
    from .subject import CallEnvironment, environment_for

#: where each name of the package lives (imported on first use: see `__getattr__`)
_HOME = {
    "decide_call": "decide",
    "decide_layer": "decide",
    "decide_part": "decide",
    "most_restrictive": "decide",
    "ArgumentKind": "model",
    "ArgumentSpec": "model",
    "CallDecision": "model",
    "Effect": "model",
    "LayerCallRules": "model",
    "Reason": "model",
    "Rule": "model",
    "SpecifierError": "model",
    "SpecifierProblem": "model",
    "ToolCallRules": "model",
    "Verdict": "model",
    "Roots": "paths",
    "compile_rule": "specifiers",
    "has_specifier": "specifiers",
    "split_entry": "specifiers",
    "CallEnvironment": "subject",
    "environment_for": "subject",
}


def __getattr__(name: str) -> object:
    """A name of the package, from the stage that defines it, imported on first use:
    compiling a policy's call rules needs `model` and `specifiers`, not the shell analysis
    and the deciders (`decide`, `subject`, `shell`) that a running agent's first call loads."""
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "ArgumentKind",
    "ArgumentSpec",
    "CallDecision",
    "CallEnvironment",
    "Effect",
    "LayerCallRules",
    "Reason",
    "Roots",
    "Rule",
    "SpecifierError",
    "SpecifierProblem",
    "ToolCallRules",
    "Verdict",
    "compile_rule",
    "decide_call",
    "decide_layer",
    "decide_part",
    "environment_for",
    "has_specifier",
    "most_restrictive",
    "split_entry",
]
