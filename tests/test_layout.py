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
#: at most this many levels of units (a flat module, or a sub-package counted as one)
MAX_LEVELS = 12
#: at most this many modules flat in policyctl/ (the public face and the ground vocabulary)
MAX_FLAT = 14


def module_names() -> dict[str, Path]:
    return {
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p
        for p in PACKAGE.rglob("*.py")
    }


def _targets(module: str, path: Path, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (a.name for a in node.names)
        return
    if node.level:
        parts = module.split(".")
        keep = len(parts) - node.level + (path.name == "__init__.py")
        base = ".".join(parts[:keep] + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    yield base
    yield from (f"{base}.{a.name}" for a in node.names)


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the modules it imports (a package's `__init__` only hands names on, so an
    import of a package's name counts as an edge to the module that defines it only when
    it names that module)."""
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _targets(module, path, node):
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
