"""Which policy source `policyctl serve --policy` names: a file or a bundle on disk, or a
bundle URL."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from .state import FileSource, Listener, PolicySource


def is_url(policy: str) -> bool:
    return policy.startswith(("http://", "https://"))


def open_source(
    args: argparse.Namespace,
    listener: Listener,
    store: Callable[..., Any],
    key: bytes | None = None,
) -> PolicySource:
    """`store` is `runtime.store.PolicyStore`, handed in by the command line; `key` verifies
    a bundle pulled from a URL (required there)."""
    if is_url(args.policy):
        from .bundlepoll import UrlSource, default_bundle_dir

        if key is None:
            raise ValueError("a bundle URL needs a bundle key")
        return UrlSource(
            args.policy,
            args.bundle_dir or str(default_bundle_dir()),
            key,
            interval=args.poll_interval,
            listener=listener,
        )
    return FileSource(args.policy, store, interval=args.reload_interval, listener=listener)
