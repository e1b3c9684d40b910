"""Which policy source `policyctl serve --policy` names: a file or a bundle on disk."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from .state import FileSource, Listener, PolicySource


def is_url(policy: str) -> bool:
    return policy.startswith(("http://", "https://"))


def open_source(
    args: argparse.Namespace, listener: Listener, store: Callable[..., Any]
) -> PolicySource:
    """`store` is `runtime.store.PolicyStore`, handed in by the command line."""
    return FileSource(args.policy, store, interval=args.reload_interval, listener=listener)
