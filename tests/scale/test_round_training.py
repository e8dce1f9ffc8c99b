"""A round's SCALe loss is built from the round's settings."""

import pytest
import torch

from st_contrastive.config.scale import RoundTraining
from st_contrastive.losses import scale
from st_contrastive.scale import round_training as objectives
from st_contrastive.scale.round_training import load_encoder, train_round

TEXTS = ["Who wrote Hamlet ?", "Where is Lima ?", "Who painted it ?", "Where is Rome ?"]
LABELS = [0, 1, 0, 1]


def tiny_rounds(min_steps: int, **changes) -> RoundTraining:
    """Rounds of ``min_steps`` steps of 4 rows on :data:`TEXTS`, with ``changes``."""
    return RoundTraining(
        epochs=1, from_base_epochs=1, min_steps=min_steps, min_steps_per_class=0, batch_size=4, **changes
    )


@pytest.mark.parametrize("objective", ["supcon-ce", "ce"])
def test_a_round_trains_with_its_label_smoothing(objective, base_model, tmp_path, monkeypatch):
    built = []

    class Recorded(scale.SCALeLoss):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            built.append(self)

    monkeypatch.setattr(scale, "SCALeLoss", Recorded)  # the real loss, its instances kept to be read
    training = tiny_rounds(1, label_smoothing=0.1)
    model = train_round(objective, base_model, TEXTS, LABELS, ["who", "where"], training, tmp_path / "round", seed=0)
    assert model.steps == 1 and [loss.label_smoothing for loss in built] == [0.1]
    with pytest.raises(ValueError, match=r"label_smoothing=1: must be in \[0, 1\)"):
        RoundTraining(label_smoothing=1)


def test_shrink_to_base_moves_each_weight_that_share_of_the_way_to_the_base(base_model):
    last, base = load_encoder(base_model, 128), load_encoder(base_model, 128)
    with torch.no_grad():
        for value in last.parameters():
            value.add_(torch.randn_like(value))
    before = {name: value.clone() for name, value in last.state_dict().items()}
    objectives.shrink_to_base(last, base, 0.25)
    after, target = last.state_dict(), base.state_dict()
    for name, value in before.items():
        expected = 0.75 * value + 0.25 * target[name] if value.is_floating_point() else value
        torch.testing.assert_close(after[name], expected)
    assert any(not torch.equal(before[name], after[name]) for name in before)
    objectives.shrink_to_base(last, base, 1.0)  # all the way: the base's weights, exactly
    assert all(torch.equal(value, target[name]) for name, value in last.state_dict().items())


@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
def test_only_a_round_that_continues_shrinks_to_the_base(share, base_model, tmp_path, monkeypatch):
    shrunk, shrink = [], objectives.shrink_to_base
    monkeypatch.setattr(objectives, "shrink_to_base", lambda e, b, s: (shrunk.append(s), shrink(e, b, s)))
    training = tiny_rounds(1, shrink_to_base=share)
    names = ["who", "where"]
    train_round("supcon-ce", base_model, TEXTS, LABELS, names, training, tmp_path / "c0", 0).save(tmp_path / "r0")
    assert shrunk == []  # from the base: nothing to shrink
    train_round("supcon-ce", base_model, TEXTS, LABELS, names, training, tmp_path / "c1", 1, warm_from=tmp_path / "r0")
    assert shrunk == ([share] if share else [])
    with pytest.raises(ValueError, match=r"shrink_to_base=1.5: must be in \[0, 1\]"):
        RoundTraining(shrink_to_base=1.5)


def test_frozen_word_embeddings_stay_the_base_models_and_the_rest_trains(base_model, tmp_path):
    # 4 steps: 2 on pairs, then 2 of SupCon + CE (a phase's first step is all warm-up); neither moves the embeddings
    training = tiny_rounds(4, pairs_per_step=2, freeze_word_embeddings=True)
    model = train_round("supcon-ce", base_model, TEXTS, LABELS, ["who", "where"], training, tmp_path / "c", seed=0)
    base = load_encoder(base_model, 128).state_dict()
    trained = {name: value for name, value in model.encoder.state_dict().items() if value.is_floating_point()}
    changed = {name for name, value in trained.items() if not torch.equal(value, base[name])}
    embedding = next(name for name in trained if name.endswith("word_embeddings.weight"))
    assert model.steps == 4 and embedding not in changed
    assert any(name.endswith("query.weight") for name in changed)  # the layers above them did train


def test_frozen_layers_stay_the_base_models_and_the_layers_above_train(base_model, tmp_path):
    training = tiny_rounds(4, pairs_per_step=2, frozen_layers=1)
    model = train_round("supcon-ce", base_model, TEXTS, LABELS, ["who", "where"], training, tmp_path / "c", seed=0)
    base = load_encoder(base_model, 128).state_dict()
    trained = {name: value for name, value in model.encoder.state_dict().items() if value.is_floating_point()}
    changed = {name for name, value in trained.items() if not torch.equal(value, base[name])}
    layers = model.encoder[0].auto_model.config.num_hidden_layers
    assert layers > 1 and model.steps == 4
    assert not {name for name in changed if "embeddings." in name or ".layer.0." in name}
    assert {name for name in changed if f".layer.{layers - 1}." in name}  # the top layer did train
    with pytest.raises(ValueError, match=f"frozen_layers={layers + 1}: the encoder has {layers} layers"):
        train_round(
            "supcon-ce",
            base_model,
            TEXTS,
            LABELS,
            ["who", "where"],
            tiny_rounds(4, frozen_layers=layers + 1),
            tmp_path / "d",
            seed=0,
        )
    with pytest.raises(ValueError, match="frozen_layers=-1"):
        RoundTraining(frozen_layers=-1)


# 5 steps at a share of 0.4: 2 steps' texts (4 a step) on pairs, as 2 steps of 2 pairs or 1 step of 4
@pytest.mark.parametrize(("pairs_per_step", "pair_steps"), [(2, 2), (4, 1)])
def test_a_pair_share_trains_setfits_pairs_first_then_the_objective_for_the_steps_left(
    base_model, tmp_path, monkeypatch, pairs_per_step, pair_steps
):
    import st_contrastive.training as training_module

    calls, real_train = [], training_module.train

    def recorded(encoder, loss, dataset, settings, **kwargs):
        calls.append((type(loss).__name__, dataset, settings.max_steps, settings.batch_size))
        return real_train(encoder, loss, dataset, settings, **kwargs)

    monkeypatch.setattr(training_module, "train", recorded)
    training = tiny_rounds(5, pair_share=0.4, pairs_per_step=pairs_per_step)
    model = train_round("supcon-ce", base_model, TEXTS, LABELS, ["who", "where"], training, tmp_path / "c", seed=0)
    (pair_loss, pairs, trained_pair_steps, pair_batch), (loss, _, steps, batch) = calls
    assert (pair_loss, trained_pair_steps, pair_batch) == ("CosineSimilarityLoss", pair_steps, pairs_per_step)
    assert (loss, steps, batch) == ("SCALeLoss", 3, 4) and model.steps == pair_steps + 3
    same = [LABELS[TEXTS.index(a)] == LABELS[TEXTS.index(b)] for a, b in zip(pairs["sentence1"], pairs["sentence2"])]
    assert pairs["label"] == [1.0 if s else 0.0 for s in same] and set(pairs["label"]) == {0.0, 1.0}  # SetFit's
    assert len(pairs) >= pair_steps * pair_batch  # fresh pairs for every step
    with pytest.raises(ValueError, match=r"pair_share=1: must be in \[0, 1\)"):
        RoundTraining(pair_share=1)
    with pytest.raises(ValueError, match="pairs_per_step=0"):
        RoundTraining(pairs_per_step=0)


def test_without_a_pair_share_a_round_trains_the_objective_alone(base_model, tmp_path, monkeypatch):
    import st_contrastive.training as training_module

    losses, real_train = [], training_module.train
    monkeypatch.setattr(
        training_module,
        "train",
        lambda e, loss, *a, **k: (losses.append(type(loss).__name__), real_train(e, loss, *a, **k))[1],
    )
    training = tiny_rounds(2, pair_share=0)
    model = train_round("ce", base_model, TEXTS, LABELS, ["who", "where"], training, tmp_path / "c", seed=0)
    assert losses == ["SCALeLoss"] and model.steps == 2
