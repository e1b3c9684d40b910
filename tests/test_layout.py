"""The package's layout is its architecture: stages in the data's order, no import cycle.

The import graph is built from the source with `ast`, counting every import: those under
`TYPE_CHECKING` and those inside functions too, since those are the ones that hide a cycle
from the interpreter.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT

PACKAGE = ROOT / "policyctl"

#: the stage packages in the order the data flows; a stage never imports a later one
STAGES = (
    "formats",
    "catalog",
    "document",
    "callrules",
    "compile",
    "pipeline",
    "explain",
    "analysis",
)
#: at most this many levels of units (a flat module, or a sub-package counted as one); 13 since
#: the decision server (integrations/server) reads request contexts with analysis' ContextSpec
MAX_LEVELS = 13
#: at most this many modules flat in policyctl/ (the public face and the ground vocabulary)
MAX_FLAT = 14


def module_names() -> dict[str, Path]:
    return {
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p
        for p in PACKAGE.rglob("*.py")
    }


def _base(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute module a `from ... import` statement reads from."""
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    keep = len(parts) - node.level + (path.name == "__init__.py")
    return ".".join(parts[:keep] + ([node.module] if node.module else []))


def _is_package(name: str, modules: dict[str, Path]) -> bool:
    return name in modules and modules[name].name == "__init__.py"


def _definer(package: str, name: str, modules: dict[str, Path], depth: int = 0) -> str | None:
    """The module behind `from package import name`: a submodule of that name, or the module
    the package's `__init__` hands the name on from (an import of its own, or an entry of a
    lazy `_EXPORTS` map)."""
    if f"{package}.{name}" in modules:
        return f"{package}.{name}"
    if depth > 8:
        return None
    path = modules[package]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    source = _base(package, path, node)
                    if _is_package(source, modules):
                        return _definer(source, alias.name, modules, depth + 1)
                    return source if source in modules else None
        elif isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "_EXPORTS" for target in node.targets
        ):
            lazy = ast.literal_eval(node.value)
            if name in lazy:
                return f"{package}.{lazy[name]}"
    return None


def _targets(module: str, path: Path, node: ast.AST, modules: dict[str, Path]) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (a.name for a in node.names)
    elif isinstance(node, ast.ImportFrom):
        base = _base(module, path, node)
        if not _is_package(base, modules):
            yield base
        for alias in node.names:
            if _is_package(base, modules):
                found = _definer(base, alias.name, modules)
                if found is not None:
                    yield found
            else:
                yield f"{base}.{alias.name}"
    elif (  # importlib.import_module("policyctl.x")
        isinstance(node, ast.Call)
        and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        yield node.args[0].value


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the modules it imports. A package's `__init__` only hands names on: a name
    imported from a package is an edge to the module that defines it."""
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for target in _targets(module, path, node, modules):
                internal = target in modules and target != module
                if internal and modules[target].name != "__init__.py":
                    edges[module].add(target)
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph, or None (iterative depth-first search)."""
    state: dict[str, int] = {}  # 1 on the path, 2 done
    for start in sorted(edges):
        if start in state:
            continue
        path = [start]
        stack = [iter(sorted(edges[start]))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(edges[nxt])))
    return None


def unit(module: str) -> str:
    """`policyctl.compile.scopes` -> `compile`; a flat module is its own unit."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "policyctl"


def unit_graph(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    units: dict[str, set[str]] = {}
    for module, targets in edges.items():
        units.setdefault(unit(module), set()).update(
            unit(t) for t in targets if unit(t) != unit(module)
        )
    return units


def levels(edges: dict[str, set[str]]) -> dict[str, int]:
    """1 + the longest chain of imports below each node (the graph has no cycle)."""
    memo: dict[str, int] = {}

    def level(node: str) -> int:
        if node not in memo:
            memo[node] = 1 + max((level(t) for t in edges[node]), default=0)
        return memo[node]

    for node in edges:
        level(node)
    return memo


GRAPH = import_graph(module_names())


def test_no_module_imports_itself_back() -> None:
    assert find_cycle(GRAPH) is None, " -> ".join(find_cycle(GRAPH) or ())


def test_no_package_imports_itself_back_and_the_tree_is_shallow() -> None:
    units = unit_graph(GRAPH)
    assert find_cycle(units) is None, " -> ".join(find_cycle(units) or ())
    deepest = max(levels(units).values())
    assert deepest <= MAX_LEVELS, f"{deepest} levels of units"


@pytest.mark.parametrize("stage", STAGES)
def test_a_stage_imports_no_later_stage(stage: str) -> None:
    later = set(STAGES[STAGES.index(stage) + 1 :])
    upward = sorted(
        f"{m} -> {t}"
        for m, targets in GRAPH.items()
        if unit(m) == stage
        for t in targets
        if unit(t) in later
    )
    assert not upward, upward


def test_only_the_face_and_the_ground_vocabulary_sit_flat() -> None:
    flat = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(flat) <= MAX_FLAT, flat


def test_the_checks_see_a_hidden_cycle(tmp_path: Path) -> None:
    """The checks above can fail: a cycle closed by a type-only import and one closed inside
    a function are both found, and depth is counted."""
    files = {
        "policyctl.a": "from .b import B\n",
        "policyctl.b": "import typing\nif typing.TYPE_CHECKING:\n    from .c import C\n",
        "policyctl.c": "def f():\n    from policyctl.a import A\n",
    }
    modules = {}
    for name, text in files.items():
        path = tmp_path / (name.split(".")[1] + ".py")
        path.write_text(text, encoding="utf-8")
        modules[name] = path
    edges = import_graph(modules)
    assert edges == {
        "policyctl.a": {"policyctl.b"},
        "policyctl.b": {"policyctl.c"},
        "policyctl.c": {"policyctl.a"},
    }
    assert find_cycle(edges) == ["policyctl.a", "policyctl.b", "policyctl.c", "policyctl.a"]
    edges["policyctl.c"] = set()
    assert find_cycle(edges) is None
    assert levels(edges) == {"policyctl.a": 3, "policyctl.b": 2, "policyctl.c": 1}
    assert unit_graph(
        {"policyctl.compile.x": {"policyctl.pipeline.y"}, "policyctl.pipeline.y": set()}
    ) == {"compile": {"pipeline"}, "pipeline": set()}


def test_the_checks_see_through_a_package_face(tmp_path: Path) -> None:
    """A name imported from a package is an edge to the module that defines it, whether the
    package imports it or hands it on lazily; `importlib.import_module` counts too."""
    (tmp_path / "p").mkdir()
    files = {
        "policyctl.a": "def f():\n    from .p import D, E\n",
        "policyctl.p": "from .e import E\n_EXPORTS = {'D': 'd'}\n",
        "policyctl.p.d": "import importlib\nimportlib.import_module('policyctl.b')\n",
        "policyctl.p.e": "",
        "policyctl.b": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n",
    }
    modules = {}
    for name, text in files.items():
        parts = name.split(".")[1:]
        is_package = name == "policyctl.p"
        path = (
            tmp_path.joinpath(*parts, "__init__.py")
            if is_package
            else tmp_path.joinpath(*parts[:-1], parts[-1] + ".py")
        )
        path.write_text(text, encoding="utf-8")
        modules[name] = path
    edges = import_graph(modules)
    assert edges["policyctl.a"] == {"policyctl.p.d", "policyctl.p.e"}
    assert find_cycle(edges) == ["policyctl.a", "policyctl.p.d", "policyctl.b", "policyctl.a"]


def _fresh(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


def test_public_functions_stay_functions_after_every_module_is_imported() -> None:
    """No module may shadow a public name of `policyctl`: importing a submodule binds it on
    the package, so a module `policyctl.resolve` would turn `from policyctl import resolve`
    into the module once anything had imported it."""
    modules = sorted(m for m in module_names() if m != "policyctl.__main__")  # runs the CLI
    code = (
        "import importlib, inspect\n"
        f"for m in {modules!r}:\n"
        "    importlib.import_module(m)\n"
        "import policyctl\n"
        "from policyctl import load_policy, load_policy_text, resolve\n"
        "for f in (resolve, load_policy, load_policy_text, policyctl.resolve):\n"
        "    assert inspect.isfunction(f), f\n"
        "for name in policyctl.__all__:\n"
        "    assert not inspect.ismodule(getattr(policyctl, name)), name\n"
        "print('ok', len({m for m in __import__('sys').modules if m.startswith('policyctl')}))\n"
    )
    out = _fresh(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok ")
    assert int(out.stdout.split()[1]) >= len(modules)


@pytest.mark.parametrize(
    "module",
    ["policyctl.compile.compiled", "policyctl.pipeline.engine", "policyctl.pipeline.resolve"],
)
def test_the_compiled_data_and_the_resolve_engine_load_no_compiler(module: str) -> None:
    code = (
        f"import sys, {module}\n"
        "heavy = ('pydantic', 'policyctl.compile.scopes', 'policyctl.compile.assemble',\n"
        "         'policyctl.document', 'policyctl.formats', 'ruamel')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n"
    )
    out = _fresh(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_a_hook_call_from_the_compiled_cache_loads_no_compiler_and_no_runtime(
    tmp_path: Path,
) -> None:
    """`policyctl hook` runs once per tool call: after the first call has filled the cache,
    a call reads the compiled policy back and decides without pydantic, the YAML reader, the
    document stages, the compiler or the runtime (the stub `refuse_pydantic_plugins` puts in
    place of pydantic's plugin loader is not pydantic)."""
    payload = (
        '{"hook_event_name": "PreToolUse", "cwd": "/srv/repo", "tool_name": "Bash", '
        '"tool_input": {"command": "git push origin main"}}'
    )
    code = (
        "import io, sys\n"
        f"sys.stdin = io.TextIOWrapper(io.BytesIO({payload.encode()!r}))\n"
        "from policyctl.cli.main import main\n"
        "main(['hook', 'claude-code', '--policy', 'examples/hosts-team.yaml',\n"
        f"      '--cache-dir', {str(tmp_path)!r}])\n"
        "heavy = ('pydantic', 'policyctl.compile.scopes', 'policyctl.compile.assemble',\n"
        "         'policyctl.document', 'policyctl.formats', 'ruamel', 'policyctl.runtime',\n"
        "         'policyctl.api', 'policyctl.analysis')\n"
        "found = sorted(m for m in sys.modules if m.startswith(heavy))\n"
        "print([m for m in found if m != 'pydantic.plugin._loader'], file=sys.stderr)\n"
    )
    first = _fresh(code)  # compiles and fills the cache
    assert first.returncode == 0 and '"permissionDecision":"ask"' in first.stdout, first
    second = _fresh(code)
    assert second.returncode == 0 and '"permissionDecision":"ask"' in second.stdout, second
    assert second.stderr.strip() == "[]"


def test_integrations_import_no_runtime_and_no_cli() -> None:
    """Integrations sit beside the runtime: a hook must not pay for the runtime's start-up,
    and the CLI is built on top of both."""
    upward = sorted(
        f"{m} -> {t}"
        for m, targets in GRAPH.items()
        if unit(m) == "integrations"
        for t in targets
        if unit(t) in ("runtime", "cli")
    )
    assert not upward, upward


@pytest.mark.parametrize("face", ["policyctl", "policyctl.catalog", "policyctl.compile"])
def test_a_package_face_lists_every_name_it_hands_on(face: str) -> None:
    """`__all__` (what type checkers read as exported) and the lazy map (what is imported at
    run time) name the same things, and each is the object its module defines."""
    import importlib

    package = importlib.import_module(face)
    exports = package._EXPORTS
    assert set(package.__all__) - {"__version__"} == set(exports)
    for name, module in exports.items():
        value = getattr(package, name)
        assert value is getattr(importlib.import_module(f"{face}.{module}"), name)
    with pytest.raises(AttributeError, match="no attribute 'load_catalogue'"):
        package.load_catalogue  # noqa: B018
