"""Package exports imported on first use, so that building a command's parser never waits for torch."""

from __future__ import annotations

import importlib
from collections.abc import Callable


def lazy_exports(package: str, exports: dict[str, str]) -> Callable[[str], object]:
    """A module-level ``__getattr__`` that imports ``package.<module>`` when one of its ``exports`` is first used.

    ``exports`` maps each exported name to the submodule defining it. Packages pair it with the same imports under
    ``if TYPE_CHECKING:``, so readers and IDEs still follow every name to its definition.
    """

    def __getattr__(name: str):
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{exports[name]}"), name)

    return __getattr__
