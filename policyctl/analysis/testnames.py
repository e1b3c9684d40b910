"""What a tool name in a policy test file stands for in one run.

A test says `denied: [exec]` or `never: {tools: ["github__*"]}`; checking `is_allowed` on the
text would pass for anything that is not one allowed tool's name: a group (`group:runtime`), a
glob, a plugin id, `bundle-mcp`, a typo. So a name is read as the run reads policy entries: a
tool of the run stands for itself; anything else stands for every tool of the run's inventory
it matches as an entry (groups expanded from the catalog, globs, plugin ids), and a name that
stands for no tool is a failure of its own, with a did-you-mean.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..compile.compiled import CompiledPolicy
from ..compile.entries import Entry, build_list
from ..diagnostics import Source, did_you_mean
from ..formats.files import confinement_problem, extends_error
from ..names import fold
from ..pipeline.result import Resolution


def normal_name(name: str, policy: CompiledPolicy) -> str:
    text = fold(name)
    return policy.catalog.aliases.get(text, text)


def stands_for(name: str, res: Resolution, policy: CompiledPolicy) -> tuple[str, ...]:
    """The run's tools `name` (already normal) names: itself, or every tool it matches."""
    if name in res.inventory.names:
        return (name,)
    cat = policy.catalog
    entry = Entry(name, name, "test", None)
    one = build_list("test", None, [entry], cat.groups, cat.covers)
    return tuple(t.name for t in res.inventory.tools if one.match(t.name, t.plugin_id) is not None)


def names_nothing(name: str, res: Resolution) -> str:
    """The failure for a name that stands for no tool of the run."""
    near = did_you_mean(name, list(res.inventory.names))
    hint = f'; did you mean "{near}"?' if near else ""
    return f'"{name}" names no tool in this run\'s inventory{hint}'


def _repository_of(path: Path) -> Path | None:
    """The work tree holding `path` (the nearest directory with a `.git`), or None."""
    for directory in path.parents:
        if (directory / ".git").exists():
            return directory
    return None


def named_policy_path(test_path: str | Path, policy: str, named_at: Source | None) -> str:
    """The policy a test file names, confined like `extends`: a policy file (.yaml, .yml,
    .json, .toml) under the test file's directory, the repository holding it, or a directory
    of POLICYCTL_EXTENDS_ROOTS. A pull request controls the test file, so `policy:` must not
    reach a credentials file that CI would then quote into its log."""
    from ..settings import default_limits

    test_file = Path(test_path).resolve()
    roots = [test_file.parent]
    repository = _repository_of(test_file)
    if repository is not None:
        roots.append(repository)
    roots += [Path(r).resolve() for r in default_limits().extends_roots]
    target = Path(test_path).parent / policy
    problem = confinement_problem(target, tuple(roots))
    if problem:
        raise extends_error(f"policy: {problem}", named_at, path="policy")
    return os.path.normpath(target)
