"""Optional dependencies: the core installs what DeCLUTR and SupCon + CE need, heavier features sit behind extras
(``setup.cfg``). A feature imports its dependency through :func:`require_extra`, so a missing one is one line
naming the extra to install, not a traceback."""

from __future__ import annotations

import importlib
from types import ModuleType


class MissingExtra(ImportError, ValueError):
    """A feature's optional dependency is not installed. Also a ValueError: the command line prints it as one line,
    as it prints other bad input, and exits with status 1."""

    def __init__(self, module: str, extra: str) -> None:
        self.extra = extra
        super().__init__(
            f"needs the '{extra}' extra ({module} is not installed): pip install \"st-contrastive[{extra}]\"",
            name=module,
        )


def require_extra(module: str, extra: str) -> ModuleType:
    """``module`` imported, or :class:`MissingExtra` naming ``extra`` when its package is not installed.

    Only the absence of the package itself is reported that way: an installed package whose own import fails (a
    broken install, a missing dependency of its own) raises its original error.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        package = module.partition(".")[0]
        if error.name is None or error.name.partition(".")[0] != package:
            raise
        raise MissingExtra(package, extra) from error
