"""sentence-transformers' loss modifiers (MatryoshkaLoss, AdaptiveLayerLoss, Matryoshka2dLoss) around this package's
losses: at each dimension the wrapped loss equals the loss on embeddings truncated by hand (cut, then normalized, as
the modifier does), the terms stay logged, MLM and the heads count once (at full size), the cached DeCLUTR loss
gives the uncached one's values and gradients, and a wrapped loss trains and reloads with ``truncate_dim``."""

import contextlib
import json

import pytest
import torch
import torch.nn.functional as F
from datasets import Dataset
from sentence_transformers import SentenceTransformer
from sentence_transformers.sentence_transformer.losses import AdaptiveLayerLoss, Matryoshka2dLoss, MatryoshkaLoss

from st_contrastive.data import DeCLUTRDataCollator, SpanSampler
from st_contrastive.losses import (
    CachedDeCLUTRLoss,
    DeCLUTRLoss,
    MultiViewBilinearLoss,
    NLISupConLoss,
    SCALeLoss,
    SupConLoss,
)
from st_contrastive.losses.loss_components import MODIFIER_TERM, LossComponents
from st_contrastive.training import TrainSettings, train

DIMS = [32, 16, 8]  # the tiny model's 32 and two truncations


def test_components_weight_and_add_as_their_sum():
    a, b, t = torch.tensor(1.5), torch.tensor(-0.25), torch.tensor(0.75)
    first = LossComponents({"contrastive": a, "mlm": b})
    second = LossComponents({"contrastive": b})
    total = 0.0
    total += 2 * first
    total += second * 3 / 4
    total = total + t
    assert set(total) == {"contrastive", "mlm", MODIFIER_TERM}
    assert total["contrastive"].item() == pytest.approx(2 * 1.5 - 0.25 * 3 / 4)
    assert total["mlm"].item() == pytest.approx(-0.5) and total[MODIFIER_TERM].item() == pytest.approx(0.75)
    assert total.total().item() == pytest.approx((2 * a + 2 * b + b * 3 / 4 + t).item())


@contextlib.contextmanager
def truncated(model, dim):
    """The model's embeddings cut to ``dim`` and normalized, by hand."""
    original = model.forward

    def forward(features):
        output = original(features)
        output["sentence_embedding"] = F.normalize(output["sentence_embedding"][..., :dim], p=2, dim=-1)
        return output

    model.forward = forward
    try:
        yield
    finally:
        del model.forward


def by_hand(model, loss, features, labels, seed=0) -> dict[str, float]:
    """Σ over DIMS of the loss at each truncated dimension, term by term."""
    total = {}
    for dim in DIMS:
        torch.manual_seed(seed)
        with truncated(model, dim):
            out = loss([dict(f) for f in features], labels)
        for name, value in out.items():
            total[name] = total.get(name, 0.0) + value.item()
    return total


def wrapped(model, loss, features, labels, seed=0) -> dict[str, float]:
    torch.manual_seed(seed)
    out = MatryoshkaLoss(model, loss, DIMS)([dict(f) for f in features], labels)
    assert isinstance(out, LossComponents)
    return {name: value.item() for name, value in out.items()}


def declutr_batch(model):
    collator = DeCLUTRDataCollator(
        model.tokenizer, SpanSampler(num_anchors=2, num_positives=2, min_length=8, max_length=32), seed=0
    )
    batch = collator([{"token_ids": list(range(100 + d, 400 + d))} for d in range(3)])
    return [
        {k[len(prefix) :]: v for k, v in batch.items() if k.startswith(prefix)} for prefix in ("anchor_", "positive_")
    ]


def test_declutr_at_each_dimension_with_mlm_counted_once(tiny_model):
    tiny_model.eval()
    features = declutr_batch(tiny_model)
    loss = DeCLUTRLoss(tiny_model)
    ours, expected = wrapped(tiny_model, loss, features, None), by_hand(tiny_model, loss, features, None)
    assert set(ours) == {"contrastive", "mlm"}
    assert ours["contrastive"] == pytest.approx(expected["contrastive"], abs=1e-5)
    full = loss([dict(f) for f in features], None)  # MLM reads the tokens: once, as without the modifier
    assert ours["mlm"] == pytest.approx(full["mlm"].item(), abs=1e-5) == pytest.approx(expected["mlm"], abs=1e-5)


def test_cached_declutr_takes_part_in_the_gradient_cache_protocol(tiny_model):
    """MatryoshkaLoss decorates the cached loss's calculate_loss: same values and encoder gradients as the uncached."""
    tiny_model.eval()  # no dropout: the two passes of GradCache see the same encoder
    features = declutr_batch(tiny_model)
    results = []
    for loss in (DeCLUTRLoss(tiny_model), CachedDeCLUTRLoss(tiny_model, mini_batch_size=2)):
        loss.mlm_head.load_state_dict(results[0][2]) if results else None
        tiny_model.zero_grad()
        out = MatryoshkaLoss(tiny_model, loss, DIMS)([dict(f) for f in features], None)
        out.total().backward()
        gradient = torch.cat([p.grad.flatten() for p in tiny_model.parameters() if p.grad is not None])
        results.append(({k: v.item() for k, v in out.items()}, gradient, loss.mlm_head.state_dict()))
    (uncached, uncached_gradient, _), (cached, cached_gradient, _) = results
    assert cached == pytest.approx(uncached, abs=1e-5)
    assert torch.allclose(cached_gradient, uncached_gradient, atol=1e-5)


NLI = [
    ("A dog runs .", "An animal moves .", 0),
    ("A dog runs .", "A cat sleeps .", 2),
    ("A dog runs .", "The dog is fast .", 1),
    ("A man cooks .", "Someone makes food .", 0),
    ("A man cooks .", "A woman swims .", 2),
]


def test_nli_supcon_at_each_dimension_with_the_head_at_full_size(tiny_model):
    tiny_model.eval()
    features = [tiny_model.tokenize([r[0] for r in NLI]), tiny_model.tokenize([r[1] for r in NLI])]
    labels = torch.tensor([r[2] for r in NLI])
    loss = NLISupConLoss(tiny_model, supcon_weight=0.5)
    ours, expected = wrapped(tiny_model, loss, features, labels), by_hand(tiny_model, loss, features, labels)
    assert ours == pytest.approx(expected, abs=1e-5)
    with truncated(tiny_model, 32):  # the head's term: once, on the full (normalized) embedding
        assert ours["cross_entropy"] == pytest.approx(loss(features, labels)["cross_entropy"].item(), abs=1e-5)


def test_nli_supcon_with_a_head_per_size_trains_each_head_at_its_size(tiny_model):
    from st_contrastive.models import NLIClassifier

    tiny_model.eval()
    features = [tiny_model.tokenize([r[0] for r in NLI]), tiny_model.tokenize([r[1] for r in NLI])]
    labels = torch.tensor([r[2] for r in NLI])
    torch.manual_seed(0)
    loss = NLISupConLoss(tiny_model, supcon_weight=0.5, size_classifiers={16: NLIClassifier(16), 8: NLIClassifier(8)})
    ours, expected = wrapped(tiny_model, loss, features, labels), by_hand(tiny_model, loss, features, labels)
    assert ours == pytest.approx(expected, abs=1e-5)  # by hand: each size's CE read by that size's head
    with truncated(tiny_model, 32):
        full_only = loss(features, labels)["cross_entropy"].item()
    assert ours["cross_entropy"] > full_only + 1e-3  # the two smaller heads add their CE
    MatryoshkaLoss(tiny_model, loss, DIMS)([dict(f) for f in features], labels).total().backward()
    assert all(head.linear.weight.grad is not None for head in loss.size_classifiers.values())


def test_scale_at_each_dimension_over_the_same_dropout_views(tiny_model):
    tiny_model.train()
    texts = ["who wrote it ?", "where is it ?", "who sang it ?", "where was he ?", "how far is it ?"]
    features, labels = [tiny_model.tokenize(texts)], torch.tensor([0, 1, 0, 1, 2])
    loss = SCALeLoss(tiny_model, num_labels=3, supcon_weight=0.5, dropout_rates=(0.0, 0.2, 0.4))
    ours = wrapped(tiny_model, loss, features, labels, seed=7)
    expected = by_hand(tiny_model, loss, features, labels, seed=7)  # each dimension re-draws the same views
    assert set(ours) == {"cross_entropy", "supcon"} and ours == pytest.approx(expected, abs=1e-5)


def test_supcon_inside_adaptive_layer_and_2d_matryoshka(tiny_model):
    tiny_model.eval()
    features, labels = [tiny_model.tokenize(["who is it ?", "where is it ?", "who was it ?"])], torch.tensor([0, 1, 0])
    for modifier in (
        AdaptiveLayerLoss(tiny_model, SupConLoss(tiny_model)),
        Matryoshka2dLoss(tiny_model, SupConLoss(tiny_model), DIMS),
    ):
        assert torch.isfinite(modifier([dict(f) for f in features], labels))


def up_to_layer(model, layer: int):
    """A copy of the model whose encoder stops after ``layer`` layers (0: the embedding layer's output): its
    embedding is what AdaptiveLayerLoss pools from that layer's cached output."""
    import copy

    shallow = copy.deepcopy(model)
    shallow[0].auto_model.encoder.layer = shallow[0].auto_model.encoder.layer[:layer]
    return shallow


LAYER_LOSSES = {
    "declutr": lambda m: DeCLUTRLoss(m),
    "nli-supcon": lambda m: NLISupConLoss(m, supcon_weight=0.5),
    "scale": lambda m: SCALeLoss(m, num_labels=3, supcon_weight=0.5, dropout_rates=(0.0, 0.0)),
}


def layer_batch(model, name):
    if name == "declutr":
        return declutr_batch(model), None
    if name == "nli-supcon":
        return [model.tokenize([r[0] for r in NLI]), model.tokenize([r[1] for r in NLI])], torch.tensor(
            [r[2] for r in NLI]
        )
    texts = ["who wrote it ?", "where is it ?", "who sang it ?", "where was he ?", "how far is it ?"]
    return [model.tokenize(texts)], torch.tensor([0, 1, 0, 1, 2])


@pytest.mark.parametrize("name", list(LAYER_LOSSES))
def test_adaptive_layer_equals_the_loss_of_each_shallower_encoder(tiny_model, name):
    """Every layer, no KL term: the final layer's loss (all terms) plus the mean over the earlier layers of the loss
    computed on an encoder cut after that layer, by hand; MLM and the heads' CE count once, at the last layer. SCALe
    runs two dropout views (rate 0: the same encoder twice), each with its own copy of the inputs."""
    make = LAYER_LOSSES[name]
    tiny_model.train() if name == "scale" else tiny_model.eval()
    features, labels = layer_batch(tiny_model, name)
    loss = make(tiny_model)
    modifier = AdaptiveLayerLoss(tiny_model, loss, n_layers_per_step=-1, kl_temperature=0.0)
    ours = {k: v.item() for k, v in modifier([dict(f) for f in features], labels).items()}
    expected = {k: v.item() for k, v in loss([dict(f) for f in features], labels).items()}
    layers = len(tiny_model[0].auto_model.encoder.layer)  # layers 0 .. layers-1 before the last
    for layer in range(layers):
        shallow = up_to_layer(tiny_model, layer)
        shallow.train(tiny_model.training)
        # The same loss on the shallower encoder; its own MLM or CE term (a new head) is not one the modifier adds.
        for term, value in make(shallow)([dict(f) for f in features], labels).items():
            if term in ("contrastive", "supcon"):
                expected[term] += value.item() / layers
    assert ours == pytest.approx(expected, abs=1e-5)


@pytest.mark.parametrize("name", list(LAYER_LOSSES))
def test_each_loss_trains_inside_2d_matryoshka_with_its_terms_logged(tiny_model, name):
    """Every size at each step (n_dims_per_step=-1): the full size is among them, so MLM and the head's CE train."""
    make = LAYER_LOSSES[name]
    tiny_model.train()
    features, labels = layer_batch(tiny_model, name)
    loss = make(tiny_model)
    out = Matryoshka2dLoss(tiny_model, loss, DIMS, n_layers_per_step=1, n_dims_per_step=-1)(
        [dict(f) for f in features], labels
    )
    assert set(out) >= ({"contrastive", "mlm"} if name == "declutr" else {"supcon", "cross_entropy"})
    out.total().backward()
    assert all(torch.isfinite(v) for v in out.values())
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in tiny_model.parameters())


@pytest.mark.parametrize(
    "make",
    [
        lambda m: CachedDeCLUTRLoss(m, mini_batch_size=2),
        lambda m: __import__("st_contrastive.losses").losses.CachedNLISupConLoss(m, mini_batch_size=2),
    ],
)
def test_cached_losses_refuse_the_layer_modifiers_in_one_line(tiny_model, make):
    loss = make(tiny_model)
    features = [tiny_model.tokenize(["who is it ?", "where is it ?"]), tiny_model.tokenize(["a", "b"])]
    with pytest.raises(
        ValueError,
        match=f"{type(loss).__name__} does not work inside AdaptiveLayerLoss or "
        "Matryoshka2dLoss .*; use MatryoshkaLoss",
    ):
        AdaptiveLayerLoss(tiny_model, loss)(features, torch.tensor([0, 1]))


def test_multiview_refuses_a_modifier_in_one_line(tiny_model):
    loss = MultiViewBilinearLoss.__new__(MultiViewBilinearLoss)  # the check comes before anything multi-view
    torch.nn.Module.__init__(loss)
    loss.model, loss.context_size, loss.gather_across_devices = tiny_model, 1, False
    with pytest.raises(ValueError, match="train multi-view without MatryoshkaLoss"):
        MatryoshkaLoss(tiny_model, loss, [16, 8])([tiny_model.tokenize(["a b c", "d e f"])], None)


def test_a_wrapped_loss_trains_and_reloads_with_truncate_dim(tiny_model, tmp_path):
    texts = [f"sentence number {i} about topic {i % 3}" for i in range(24)]
    dataset = Dataset.from_dict({"text": texts, "label": [i % 3 for i in range(24)]})
    loss = MatryoshkaLoss(tiny_model, SCALeLoss(tiny_model, num_labels=3, dropout_rates=(0.0, 0.1)), DIMS)
    result = train(
        tiny_model, loss, dataset, TrainSettings(output_dir=str(tmp_path / "out"), batch_size=8, max_steps=3)
    )
    logged = [row for row in result.log_history if "loss" in row]
    assert logged and {"supcon", "cross_entropy"} <= set(logged[-1])  # the terms are still logged
    tiny_model.save(str(tmp_path / "model"))
    embeddings = SentenceTransformer(str(tmp_path / "model"), truncate_dim=8).encode(texts[:4])
    assert embeddings.shape == (4, 8)
    full = tiny_model.encode(texts[:4])
    assert torch.allclose(torch.as_tensor(embeddings), torch.as_tensor(full[:, :8]), atol=1e-5)


def test_a_loss_inside_adaptive_layer_trains_through_the_trainer_with_every_term_logged(tiny_model, tmp_path):
    texts = [f"sentence number {i} about topic {i % 3}" for i in range(24)]
    dataset = Dataset.from_dict({"text": texts, "label": [i % 3 for i in range(24)]})
    loss = AdaptiveLayerLoss(tiny_model, SCALeLoss(tiny_model, num_labels=3, dropout_rates=(0.0, 0.1)))
    before = tiny_model.encode(texts[:2])
    result = train(
        tiny_model, loss, dataset, TrainSettings(output_dir=str(tmp_path / "out"), batch_size=8, max_steps=2)
    )
    logged = [row for row in result.log_history if "loss" in row]
    assert logged and {"supcon", "cross_entropy", MODIFIER_TERM} <= set(logged[-1])  # KL between layers: "modifier"
    assert not torch.allclose(torch.as_tensor(tiny_model.encode(texts[:2])), torch.as_tensor(before))


def test_declutr_command_with_matryoshka_dims_scores_and_publishes_each_size(tmp_path, tiny_mlm_dir, capsys):
    from huggingface_hub import ModelCard
    from scipy.stats import spearmanr

    from st_contrastive.commands.cli import main as cli_main
    from st_contrastive.data_dir import data_file
    from st_contrastive.evaluation.sts import load_sts

    output = tmp_path / "run"
    cli_main(
        [
            "declutr",
            "--model",
            tiny_mlm_dir,
            "--dataset",
            str(data_file("corpus/docs.jsonl.gz")),
            "--max-rows",
            "12",
            "--max-steps",
            "3",
            "--batch-size",
            "2",
            "--max-span-length",
            "48",
            "--min-span-length",
            "8",
            "--eval-tasks",
            "stsb-dev",
            "--eval-max-rows",
            "60",
            "--matryoshka-dims",
            "32",
            "16",
            "--matryoshka-weights",
            "1",
            "2",
            "--output",
            str(output),
        ]
    )
    results = json.loads((output / "results.json").read_text())
    assert results["train"]["loss"]["matryoshka_dims"] == [32, 16]
    assert results["train"]["loss"]["matryoshka_weights"] == [1.0, 2.0]
    by_dimension = results["by_dimension"]
    assert set(by_dimension["before"]) == set(by_dimension["after"]) == {"16"}
    # The score at 16 is the Spearman of the reloaded model's truncated embeddings, as a user loads it.
    first, second, gold = load_sts("stsb", "dev", max_rows=60)
    model = SentenceTransformer(str(output), device="cpu", truncate_dim=16)
    u, v = model.encode(first, normalize_embeddings=True), model.encode(second, normalize_embeddings=True)
    expected = spearmanr((u * v).sum(axis=1), gold).statistic * 100
    assert by_dimension["after"]["16"]["stsb-dev"]["spearman"] == pytest.approx(expected, abs=1e-3)
    assert "Truncated to 16 dimensions:" in capsys.readouterr().out
    entries = [(r.dataset_name, r.dataset_config) for r in ModelCard.load(output / "README.md").data.eval_results]
    assert entries == [("stsb-dev", None), ("stsb-dev (16 dimensions)", "truncate_dim=16")]


def test_supcon_command_saves_a_head_per_size_that_reads_what_it_trained_on(tmp_path, tiny_mlm_dir):
    from st_contrastive.commands.cli import main as cli_main
    from st_contrastive.models import load_nli_classifier

    output = tmp_path / "run"
    cli_main(
        [
            "supcon",
            "--model",
            tiny_mlm_dir,
            "--dataset",
            "snli-dev",
            "--max-rows",
            "48",
            "--batch-size",
            "12",
            "--max-steps",
            "2",
            "--eval-tasks",
            "--matryoshka-dims",
            "32",
            "16",
            "--head-learning-rate",
            "0.01",
            "--output",
            str(output),
        ]
    )  # a head per size: the default, chosen on SNLI dev
    full, at_16 = load_nli_classifier(output / "nli_head"), load_nli_classifier(output / "nli_head-16")
    assert (full.embedding_dimension, at_16.embedding_dimension) == (32, 16)
    # Trained on MatryoshkaLoss's unit vectors, each head normalizes what it reads: the scale of its input is moot.
    assert full.normalize and at_16.normalize
    u, v = torch.randn(3, 16), torch.randn(3, 16)
    assert torch.allclose(at_16(u, v), at_16(5 * u, 0.5 * v), atol=1e-5)
    assert json.loads((output / "results.json").read_text())["config"]["matryoshka_heads"] is None
    # --head-learning-rate: sentence-transformers' optimizer, built with the run's recorded settings, gives every
    # head (full size and per size) that rate and the encoder the command's own.
    from st_contrastive.commands.run_folder import SETTINGS_NAME
    from st_contrastive.models import NLIClassifier
    from st_contrastive.training import ContrastiveTrainer

    recorded = json.loads((output / SETTINGS_NAME).read_text())["training"]
    settings = TrainSettings(
        output_dir=str(tmp_path / "optimizer"),
        learning_rate=recorded["learning_rate"],
        learning_rate_mapping=recorded["learning_rate_mapping"],
    )
    model = SentenceTransformer(str(output), device="cpu")
    loss = NLISupConLoss(model, size_classifiers={16: NLIClassifier(16)})
    trainer = ContrastiveTrainer(
        model=model,
        args=settings.training_arguments(),
        loss=loss,
        train_dataset=Dataset.from_dict({"premise": ["a"], "hypothesis": ["b"], "label": [0]}),
    )
    rate = {id(p): group["lr"] for group in trainer.create_optimizer().param_groups for p in group["params"]}
    assert {rate[id(p)] for p in [*loss.classifier.parameters(), *loss.size_classifiers.parameters()]} == {0.01}
    assert {rate[id(p)] for p in model.parameters()} == {2e-5}


def test_a_size_above_the_models_is_named_before_any_evaluation(tmp_path, tiny_mlm_dir, capsys):
    from st_contrastive.commands.cli import main as cli_main

    with pytest.raises(SystemExit) as exit_:
        cli_main(
            [
                "declutr",
                "--model",
                tiny_mlm_dir,
                "--max-rows",
                "4",
                "--matryoshka-dims",
                "64",
                "16",
                "--output",
                str(tmp_path / "run"),
            ]
        )
    assert "--matryoshka-dims 64 16: the model's embeddings have 32 dimensions" in str(exit_.value.code)
    assert "Evaluating" not in capsys.readouterr().err  # before the base model's evaluation


def test_cached_nli_supcon_inside_matryoshka_equals_the_uncached(tiny_model):
    from st_contrastive.losses import CachedNLISupConLoss

    tiny_model.eval()
    features = [tiny_model.tokenize([r[0] for r in NLI]), tiny_model.tokenize([r[1] for r in NLI])]
    labels = torch.tensor([r[2] for r in NLI])
    values, gradients, head = [], [], None
    for make in (NLISupConLoss, lambda m, **k: CachedNLISupConLoss(m, mini_batch_size=2, **k)):
        loss = make(tiny_model, supcon_weight=0.5)
        if head is None:
            head = loss.classifier.state_dict()
        loss.classifier.load_state_dict(head)
        tiny_model.zero_grad()
        out = MatryoshkaLoss(tiny_model, loss, DIMS)([dict(f) for f in features], labels)
        total = out.total() if isinstance(out, dict) else out
        total.backward()
        values.append(total.item())
        gradients.append(torch.cat([p.grad.flatten() for p in tiny_model.parameters() if p.grad is not None]))
    assert values[1] == pytest.approx(values[0], abs=1e-5)
    assert torch.allclose(gradients[1], gradients[0], atol=1e-5)


def test_an_empty_shared_cache_is_the_one_used_and_a_truncated_view_encodes_nothing_again(tiny_model):
    """An EmbeddingCache is falsy while empty (it has a length): `cache or EmbeddingCache(...)` used to replace a
    shared cache on its first use, so tasks never shared their encodings."""
    from st_contrastive.evaluation import evaluate_model
    from st_contrastive.evaluation.embedding_cache import EmbeddingCache

    cache = EmbeddingCache(tiny_model)
    full = evaluate_model(tiny_model, ["stsb-dev"], max_rows=20, show_progress=False, cache=cache)
    encoded = len(cache)
    assert encoded > 0
    calls = []
    encode = tiny_model.encode
    tiny_model.encode = lambda *args, **kwargs: calls.append(1) or encode(*args, **kwargs)
    try:
        at_16 = evaluate_model(tiny_model, ["stsb-dev"], max_rows=20, show_progress=False, cache=cache.truncated(16))
    finally:
        del tiny_model.encode
    assert calls == [] and len(cache) == encoded
    tiny_model.truncate_dim = 16
    expected = evaluate_model(tiny_model, ["stsb-dev"], max_rows=20, show_progress=False)
    assert at_16["stsb-dev"]["spearman"] == pytest.approx(expected["stsb-dev"]["spearman"], abs=1e-6)
    assert at_16["stsb-dev"]["spearman"] != full["stsb-dev"]["spearman"]
