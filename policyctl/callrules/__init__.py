"""Call rules: allow, ask and deny over what a tool is called with (core; not yet enforced).

Stages, a module each: `specifiers` (entry text -> compiled `Rule`, with `shell_pattern`,
`paths`, `urls`, `keyed` per argument kind), `shell` + `commands` (a command line -> its simple
commands, file accesses and unanalysable parts), `subject` (a call -> the parts to decide,
once per call), `decide` (one layer's verdict, the run's verdict). The data is in `model`.
"""

from __future__ import annotations

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
from .specifiers import compile_rule, has_specifier, split_entry
from .subject import CallEnvironment, environment_for
from .values import Roots

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
