"""Every loss keeps the package's contracts: it is exported, its config names every constructor argument, its
docstring follows sentence-transformers' template, its citation is complete, and its Example runs as written and
trains what it says."""

import importlib
import inspect
import math
import pkgutil
import re
import textwrap

import pytest
import torch
from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
from sentence_transformers.sentence_transformer.modules import Normalize

from st_contrastive import losses

LOSSES = [getattr(losses, name) for name in losses.__all__ if inspect.isclass(getattr(losses, name))]
NEEDS = {"SCALeLoss": {"num_labels": 2}}  # arguments without a default
SECTIONS = ("Args:", "References:", "Requirements:", "Inputs:", "Relations:", "Example:")


def defined_losses() -> set[type]:
    """Every public torch module a module of st_contrastive/losses/ defines, found by walking the package's files."""
    found = set()
    for info in pkgutil.iter_modules(losses.__path__):
        module = importlib.import_module(f"{losses.__name__}.{info.name}")
        found |= {
            member
            for name, member in inspect.getmembers(module, inspect.isclass)
            if member.__module__ == module.__name__ and not name.startswith("_") and issubclass(member, torch.nn.Module)
        }
    return found


def parametrized_with(test) -> set[type]:
    """The loss classes a test of this file is parametrized with, read from its own ``parametrize`` mark."""
    (mark,) = [mark for mark in test.pytestmark if mark.name == "parametrize" and mark.args[0] == "loss_class"]
    return set(mark.args[1])


def test_every_exported_loss_is_covered():
    """A loss module's class that ``losses.__all__`` misses, or a conventions test parametrized with other classes
    than the exported ones, fails here."""
    exported = {getattr(losses, name) for name in losses.__all__ if inspect.isclass(getattr(losses, name))}
    assert {loss.__name__ for loss in defined_losses()} == {loss.__name__ for loss in exported}
    assert len(exported) >= 8  # DeCLUTR, SupCon, NLI SupCon, SCALe, multi-view, and the three cached ones
    for test in (
        test_config_names_every_constructor_argument,
        test_docstring_template_and_citation,
        test_docstring_example_runs,
    ):
        assert parametrized_with(test) == exported, test.__name__


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
    """The Example runs as written and does what it says: its trainer (the only one) runs every step it plans with a
    finite loss and moves the model's weights, and each model or head it saves loads back as what it trained."""
    # The examples name all-MiniLM-L6-v2 (Transformer, Pooling, Normalize); a tiny model of the same layout stands in.
    torch.manual_seed(0)
    SentenceTransformer(modules=[*tiny_model, Normalize()], device="cpu").save(str(tmp_path / "model"))
    example = inspect.getdoc(loss_class.__init__).split("Example:")[1].split("::", 1)[1]
    code = textwrap.dedent(example).replace('"sentence-transformers/all-MiniLM-L6-v2"', repr(str(tmp_path / "model")))
    trained, train = [], SentenceTransformerTrainer.train  # ContrastiveTrainer's too: it inherits train

    def recorded_train(self, *args, **kwargs):
        before = {name: value.detach().clone() for name, value in self.model.state_dict().items()}
        output = train(self, *args, **kwargs)
        trained.append((self, before, output))
        return output

    monkeypatch.setattr(SentenceTransformerTrainer, "train", recorded_train)
    monkeypatch.chdir(tmp_path)
    namespace = {}
    exec(compile(code, f"<{loss_class.__name__} example>", "exec"), namespace)  # noqa: S102 -- our own docstring
    ((trainer, before, output),) = trained
    assert trainer.state.global_step == trainer.state.max_steps > 0
    assert math.isfinite(output.training_loss)
    after = trainer.model.state_dict()
    assert any(not torch.equal(before[name], after[name]) for name in before), "the example's training moved nothing"
    # Each OBJECT.save("runs/...") of the example (a model, a loss's head) loads back with the weights it trained.
    saves = re.findall(r"^(\w+(?:\.\w+)*)\.save\(\"(runs/[^\"]+)\"\)", code, re.MULTILINE)
    for expression, folder in saves:
        saved = eval(expression, namespace)  # a name in our own docstring, such as loss.classifier
        if isinstance(saved, SentenceTransformer):
            loaded = SentenceTransformer(str(tmp_path / folder), device="cpu", trust_remote_code=True)
        else:
            loaded = type(saved).load(str(tmp_path / folder))
        expected, found = saved.state_dict(), loaded.state_dict()
        assert expected.keys() == found.keys(), folder
        assert all(torch.equal(expected[name].cpu(), found[name].cpu()) for name in expected), folder
