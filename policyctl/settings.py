"""policyctl's own settings: limits of the loader, read from POLICYCTL_* environment variables."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache

#: The deepest nesting any setting may allow: the readers and the merge recurse once or twice
#: per level, and Python's own stack must stay far from its limit (1,000 frames).
DEPTH_CEILING = 256


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds that keep a hostile or broken file from eating time or memory."""

    max_file_bytes: int = 5 * 1024 * 1024
    max_depth: int = 64
    max_nodes: int = 2_000_000
    max_extends: int = 32
    #: nodes that YAML aliases may add on top of the nodes written out (an alias bomb's lever)
    max_alias_nodes: int = 100_000
    #: directories besides the root policy's own that `extends` may read from
    extends_roots: tuple[str, ...] = ()
    #: What one policy may hold (after `extends` merging). Each command's time grows with
    #: these, and within them every command stays inside its budget (10 s CPU, 1 GiB):
    #: agent entries, `toolsBySender` keys of all maps, entries of all tool lists
    max_agents: int = 5_000
    max_sender_keys: int = 50_000
    max_entries: int = 100_000
    #: of those, call-rule specifiers (`tool(spec)`): each compiles a matcher (a path rule a
    #: gitignore regex, ~30 us), and `diff` compiles two policies
    max_call_rules: int = 50_000
    #: nodes of a YAML file: the YAML parser costs ~20x what the JSON reader does per node,
    #: so large generated policies are written as JSON (which `max_nodes` bounds)
    max_yaml_nodes: int = 50_000


@lru_cache(maxsize=1)
def default_limits() -> Limits:
    """Limits from the environment (POLICYCTL_MAX_FILE_BYTES, ..._MAX_DEPTH, ..._MAX_NODES,
    ..._MAX_EXTENDS, ..._MAX_ALIAS_NODES, ..._EXTENDS_ROOTS, ..._MAX_AGENTS, ..._MAX_CALL_RULES,
    ..._MAX_SENDER_KEYS, ..._MAX_ENTRIES, ..._MAX_YAML_NODES).

    pydantic-settings does the reading and type-checking; it is imported only when a
    POLICYCTL_* variable is set, so the common case starts fast.
    """
    if not any(name.startswith("POLICYCTL_") for name in os.environ):
        return Limits()  # nothing to read: skip importing pydantic-settings (and asyncio)
    from pydantic import Field, ValidationError
    from pydantic_settings import BaseSettings, SettingsConfigDict

    base = Limits()

    class PolicyctlSettings(BaseSettings):
        model_config = SettingsConfigDict(env_prefix="POLICYCTL_", extra="ignore")
        max_file_bytes: int = Field(base.max_file_bytes, gt=0)
        max_depth: int = Field(base.max_depth, gt=0, le=DEPTH_CEILING)
        max_nodes: int = Field(base.max_nodes, gt=0)
        max_extends: int = Field(base.max_extends, gt=0)
        max_alias_nodes: int = Field(base.max_alias_nodes, ge=0)
        extends_roots: str = ""
        max_agents: int = Field(base.max_agents, gt=0)
        max_sender_keys: int = Field(base.max_sender_keys, gt=0)
        max_entries: int = Field(base.max_entries, gt=0)
        max_call_rules: int = Field(base.max_call_rules, gt=0)
        max_yaml_nodes: int = Field(base.max_yaml_nodes, gt=0)

    try:
        s = PolicyctlSettings()
    except ValidationError as exc:
        from .diagnostics import Diagnostic, PolicyError

        raise PolicyError(
            [
                Diagnostic.make(
                    "PC203",
                    f"environment variable POLICYCTL_{str(err['loc'][0]).upper()}: {err['msg']}",
                )
                for err in exc.errors()
            ]
        ) from None
    roots = tuple(p for p in s.extends_roots.split(os.pathsep) if p.strip())
    return Limits(
        max_file_bytes=s.max_file_bytes,
        max_depth=s.max_depth,
        max_nodes=s.max_nodes,
        max_extends=s.max_extends,
        max_alias_nodes=s.max_alias_nodes,
        extends_roots=roots,
        max_agents=s.max_agents,
        max_sender_keys=s.max_sender_keys,
        max_entries=s.max_entries,
        max_call_rules=s.max_call_rules,
        max_yaml_nodes=s.max_yaml_nodes,
    )


BUNDLE_KEY_VARIABLE = "POLICYCTL_BUNDLE_KEY_FILE"


def bundle_key_file() -> str | None:
    """POLICYCTL_BUNDLE_KEY_FILE: the HMAC key that bundles are signed with and verified
    against. When it is set, every bundle loaded must carry a valid signature. None when it is
    unset; "" when it is set to nothing (an error for whoever needs the key, never "no key")."""
    value = os.environ.get(BUNDLE_KEY_VARIABLE)
    return None if value is None else value.strip()
