"""How `explain` names a layer in a call's decision (shared by `call` and `shell`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..callrules.model import Verdict


def list_label(verdict: Verdict) -> str | None:
    """The list the deciding rule is written in (`tools.deny`, `tools.ask`,
    `agents.entries.coder.tools.callDefault`), else the layer's label: `Verdict.rule_list`,
    the one place these labels are made."""
    return verdict.rule_list
