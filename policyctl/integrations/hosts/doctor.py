"""`policyctl hook doctor`: whether an installed hook fires for every tool call."""

from __future__ import annotations


def doctor(host: str, settings: list[str], version: str | None) -> int:
    raise NotImplementedError("policyctl hook doctor is not built yet")
