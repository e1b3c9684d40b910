"""The policy a hook decides with: a bundle, or a policy file compiled once and cached.

A host starts `policyctl hook` for every tool call, so loading must cost little. A bundle
from `policyctl compile` is read as it is; a policy file (YAML, TOML, JSON) is compiled into
the same bundle form once and kept in a cache keyed by the hash of every file it read (see
`hookcache`). Any failure is `PolicyUnreadable`, which the hook answers with a refusal.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...compile.compiled import CompiledPolicy


class PolicyUnreadable(Exception):
    """The policy cannot be used; the message carries its diagnostics (file:line:col)."""


@dataclass(frozen=True, slots=True)
class LoadedPolicy:
    policy: CompiledPolicy
    #: what the decision log records as the policy's revision: the content hash
    revision: str


def load_for_hook(path: str, *, cache: bool = True) -> LoadedPolicy:
    from ...diagnostics import PolicyError

    try:
        if path.endswith(".bundle.json"):
            from ...compile.bundle import load_bundle

            policy = load_bundle(path)
        else:
            from ...api import load_policy

            policy = load_policy(path)
    except PolicyError as exc:
        shown = "; ".join(str(d) for d in exc.diagnostics[:5])
        more = len(exc.diagnostics) - 5
        raise PolicyUnreadable(
            f"the policy {path} cannot be used: {shown}"
            + (f" (and {more} more)" if more > 0 else "")
        ) from None
    except OSError as exc:
        raise PolicyUnreadable(f"the policy {path} cannot be read: {exc.strerror}") from None
    return LoadedPolicy(policy, _digest(Path(path)))


def _digest(path: Path) -> str:
    try:
        return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "unknown"
