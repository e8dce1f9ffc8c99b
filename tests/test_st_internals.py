"""The private sentence-transformers names in st_contrastive/st_internals.py are there, take the parameters they were
checked with and behave as the package relies on; a failure names the symbol and the installed version. No other
module imports a private name of sentence-transformers or transformers."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
import torch

from st_contrastive import st_internals
from st_contrastive.st_internals import CHECKED_VERSION, CREATE_MINIBATCH, PRIVATE_SYMBOLS, installed_version

PACKAGE = Path(st_internals.__file__).parent
ADAPTER = Path(st_internals.__file__)
GUARDED_PACKAGES = ("sentence_transformers", "transformers")


def changed(symbol, what: str) -> str:
    return (
        f"{symbol.qualified_name} {what} in sentence-transformers {installed_version()} (st_contrastive was checked "
        f"against {CHECKED_VERSION}): update st_contrastive/st_internals.py and its callers"
    )


@pytest.mark.parametrize("symbol", PRIVATE_SYMBOLS, ids=lambda symbol: symbol.name)
def test_private_symbol_takes_the_parameters_it_was_checked_with(symbol):
    parameters = tuple(inspect.signature(st_internals.resolve(symbol)).parameters)
    assert parameters == symbol.parameters, changed(symbol, f"takes {parameters}, not {symbol.parameters}")


def test_create_minibatch_slices_rows_and_drops_trailing_padding_columns():
    # CachedDeCLUTRLoss cuts its MLM labels to the width create_minibatch returns: the trimmed columns must be the
    # trailing ones, and the rows those of begin:end.
    lengths = torch.tensor([6, 5, 2, 1])
    attention_mask = (torch.arange(6) < lengths[:, None]).long()
    input_ids = torch.arange(24).view(4, 6) * attention_mask
    mini = st_internals.create_minibatch({"input_ids": input_ids, "attention_mask": attention_mask}, 2, 4)
    assert torch.equal(mini["input_ids"], input_ids[2:4, :2]), changed(
        CREATE_MINIBATCH, f"returned {mini['input_ids']}"
    )
    assert torch.equal(mini["attention_mask"], attention_mask[2:4, :2]), changed(CREATE_MINIBATCH, "changed the mask")


def test_ddp_replay_context_runs_a_plain_module_unchanged():
    module = torch.nn.Linear(2, 1)
    for synchronize in (False, True):
        with st_internals.ddp_replay_context(module, synchronize=synchronize):
            module(torch.ones(1, 2)).sum().backward()
    assert torch.equal(module.weight.grad, 2 * torch.ones(1, 2))


def private_imports(path: Path) -> list[str]:
    """``module.name`` of each private name (or name from a private module) that ``path`` imports from the guarded
    packages."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.partition(".")[0] in GUARDED_PACKAGES:
            private_module = any(part.startswith("_") for part in node.module.split("."))
            found += [
                f"{node.module}.{alias.name}" for alias in node.names if private_module or alias.name.startswith("_")
            ]
        elif isinstance(node, ast.Import):
            found += [
                alias.name
                for alias in node.names
                if alias.name.partition(".")[0] in GUARDED_PACKAGES
                and any(part.startswith("_") for part in alias.name.split("."))
            ]
    return found


def test_only_the_adapter_imports_private_names():
    offenders = {
        str(path.relative_to(PACKAGE.parent)): names
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != ADAPTER and (names := private_imports(path))
    }
    assert not offenders, f"private sentence-transformers/transformers imports outside st_internals.py: {offenders}"
