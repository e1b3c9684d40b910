"""How `explain` names a layer in a call's decision (shared by `call` and `shell`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..callrules.model import Reason
from ..pipeline.result import deny_label

if TYPE_CHECKING:
    from ..callrules.model import Verdict


def list_label(verdict: Verdict) -> str | None:
    """The layer's label, naming the list of the rule that decided: a layer's call rules all
    carry its allow label (`tools.allow`), but a deny rule is written in `tools.deny` and an
    ask rule in `tools.ask`."""
    label = verdict.layer
    if label is None or not label.endswith(".allow"):
        return label
    if verdict.reason is Reason.DENY_RULE:
        return deny_label(label)
    if verdict.reason is Reason.ASK_RULE:
        return label[: -len(".allow")] + ".ask"
    return label
