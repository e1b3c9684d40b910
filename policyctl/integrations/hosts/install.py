"""`policyctl hook install`: merging policyctl's hook entries into a host's settings."""

from __future__ import annotations


def install(
    host: str,
    policy: str,
    *,
    scope: str,
    settings: str | None,
    dry_run: bool,
    timeout: float,
    command: str | None,
) -> int:
    raise NotImplementedError("policyctl hook install is not built yet")
