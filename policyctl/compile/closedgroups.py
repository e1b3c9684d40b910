"""Groups are a closed set (semantics 4): a `group:x` entry must name a catalog group or
`group:plugins`.

OpenClaw keeps an unknown group as a literal that matches nothing, silently; in a deny list
that is a hole. So an unknown group is a compile error (PC320): `load_policy`, every command
and the runtime refuse the file, exactly as `validate` reports it.
"""

from __future__ import annotations

from ..catalog.model import Catalog
from ..diagnostics import did_you_mean
from .entries import PLUGINS_GROUP


def is_unknown_group(norm: str, catalog: Catalog) -> bool:
    """`norm` is a normalised entry."""
    return norm.startswith("group:") and norm != PLUGINS_GROUP and norm not in catalog.groups


def unknown_group_problem(
    raw: str, norm: str, list_key: str, catalog: Catalog, suggest: bool
) -> tuple[str, str]:
    """PC320's message and fix for the entry `raw` (normalised: `norm`) of the list at
    `list_key`. `suggest` False skips the did-you-mean (a generated file may hold thousands)."""
    known = [*catalog.groups, PLUGINS_GROUP]
    near = None
    if suggest:
        # compare the names after "group:", or every group looks alike
        near = did_you_mean(norm.removeprefix("group:"), [g.removeprefix("group:") for g in known])
    message = (
        f'unknown group "{raw.strip()}" in {list_key}: groups are the catalog\'s '
        f"({', '.join(sorted(catalog.groups))}) and {PLUGINS_GROUP}"
    )
    fix = f'did you mean "group:{near}"?' if near else "name the tools, or a group listed above"
    return message, fix
