"""Every loss keeps the package's contracts: its config names every constructor argument, its docstring follows
sentence-transformers' template, its citation is complete, and its Example runs as written."""

import inspect
import re
import textwrap

import pytest
import torch
from sentence_transformers import SentenceTransformer
from sentence_transformers.sentence_transformer.modules import Normalize

from st_contrastive import losses

LOSSES = [getattr(losses, name) for name in losses.__all__ if inspect.isclass(getattr(losses, name))]
NEEDS = {"SCALeLoss": {"num_labels": 2}}  # arguments without a default
SECTIONS = ("Args:", "References:", "Requirements:", "Inputs:", "Relations:", "Example:")


def test_every_exported_loss_is_covered():
    assert {loss.__name__ for loss in LOSSES} == {
        "CachedDeCLUTRLoss",
        "CachedNLISupConLoss",
        "CachedSupConLoss",
        "DeCLUTRLoss",
        "MultiViewBilinearLoss",
        "NLISupConLoss",
        "SCALeLoss",
        "SupConLoss",
    }


@pytest.fixture()
def model_for(tiny_model):
    """The model a loss trains: the tiny Transformer + Pooling, or a tiny multi-view model for the bilinear loss."""

    def model(loss_class):
        if loss_class.__name__ != "MultiViewBilinearLoss":
            return tiny_model
        from st_contrastive.models import multiview_model
        from st_contrastive.parsing import ParsedSentence

        sentence = ParsedSentence(
            ["Dogs", "bark", "."], ["NOUN", "VERB", "PUNCT"], [2, 0, 2], ["nsubj", "root", "punct"]
        )
        return multiview_model(["dep", "seq"], [sentence], parser=None, word_dim=8, dim=8)

    return model


@pytest.mark.parametrize("loss_class", LOSSES, ids=lambda c: c.__name__)
def test_config_names_every_constructor_argument(loss_class, model_for):
    loss = loss_class(model_for(loss_class), **NEEDS.get(loss_class.__name__, {}))
    arguments = set(inspect.signature(loss_class).parameters) - {"model"}
    assert set(loss.get_config_dict()) == arguments
    assert "gather_across_devices" in arguments


@pytest.mark.parametrize("loss_class", LOSSES, ids=lambda c: c.__name__)
def test_docstring_template_and_citation(loss_class, model_for):
    doc = inspect.getdoc(loss_class.__init__)
    positions = [doc.find(section) for section in SECTIONS]
    assert -1 not in positions and positions == sorted(positions), positions
    arguments = set(inspect.signature(loss_class).parameters) - {"model"}
    assert all(re.search(rf"^\s+{name} \(", doc, re.MULTILINE) for name in arguments), "an argument is undocumented"
    citation = loss_class(model_for(loss_class), **NEEDS.get(loss_class.__name__, {})).citation
    assert re.search(r"author = [{\"][A-Z]", citation) and re.search(r"year = [{\"]20\d\d[}\"]", citation)


@pytest.mark.parametrize("loss_class", LOSSES, ids=lambda c: c.__name__)
def test_docstring_example_runs(loss_class, tiny_model, tmp_path, monkeypatch):
    # The examples name all-MiniLM-L6-v2 (Transformer, Pooling, Normalize); a tiny model of the same layout stands in.
    torch.manual_seed(0)
    SentenceTransformer(modules=[*tiny_model, Normalize()], device="cpu").save(str(tmp_path / "model"))
    example = inspect.getdoc(loss_class.__init__).split("Example:")[1].split("::", 1)[1]
    code = textwrap.dedent(example).replace('"sentence-transformers/all-MiniLM-L6-v2"', repr(str(tmp_path / "model")))
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"<{loss_class.__name__} example>", "exec"), {})  # noqa: S102 -- our own docstring
    assert list((tmp_path / "runs").iterdir())
