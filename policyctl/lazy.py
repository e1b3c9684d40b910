"""A package's public names, handed on from the modules that define them on first use.

A package `__init__` that imported its modules eagerly would load every stage below it: the
compiled data would load the compiler, `policyctl --version` the whole engine. With
`__getattr__ = lazy_exports(__name__, {"name": "module", ...}, globals())` a name is imported
when it is first read and kept in the package's namespace after that.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str], namespace: dict[str, Any]
) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`: `exports` maps a name to its module, relative
    to the package (`"pipeline.resolve"`)."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        from importlib import import_module

        value = getattr(import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    return __getattr__
