"""The docs tier: every test under tests/docs/ (the README and docs/ examples run as written, the checks of the docs
site, the results tables and the benchmarks) carries the ``docs`` mark, so ``make test-docs`` (``-m docs``) runs them
and ``make test`` (setup.cfg's ``-m "not slow and not docs"``) leaves them out. A file added here needs no mark of its
own."""

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before the mark plugin selects by -m
def pytest_collection_modifyitems(items) -> None:
    for item in items:
        if HERE in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.docs)
