"""A round's steps, and how it spends them: SetFit's pairs first, then the objective."""

import pytest

from st_contrastive.config.scale import MIN_STEPS, PAIRS_PER_STEP, RoundTraining
from st_contrastive.scale.round_training import round_steps, train_round

TEXTS = ["Who wrote Hamlet ?", "Where is Lima ?", "Who painted it ?", "Where is Rome ?"]
LABELS = [0, 1, 0, 1]


def tiny_rounds(**changes) -> RoundTraining:
    """Rounds of one epoch of 4 rows on :data:`TEXTS` (the tests give their steps), with ``changes``."""
    return RoundTraining(epochs=1, from_base_epochs=1, min_steps_per_class=0, batch_size=4, **changes)


@pytest.mark.parametrize(
    ("labelled", "classes", "steps"),
    [(15, 6, 24), (15, 2, 10), (75, 2, 25), (150, 6, 50), (225, 2, 75)],
    ids=["six classes, 15 rows: the class floor", "two classes: MIN_STEPS", "75 rows", "150 rows", "225 rows"],
)
def test_a_round_trains_its_epochs_and_at_least_both_floors(labelled, classes, steps):
    training = RoundTraining(epochs=5, min_steps_per_class=4, batch_size=16)
    assert MIN_STEPS == 10 and round_steps(labelled, classes, training, from_base=False) == steps


def test_the_pair_phase_trains_the_texts_of_its_share_of_steps_at_sixteen_pairs_a_step():
    # 60 steps of 16 texts at a share of 0.5: 30 steps' texts, 480, as 240 pairs in 15 steps of SetFit's 16
    assert PAIRS_PER_STEP == 16 and RoundTraining(batch_size=16).pair_steps(60) == 15
    assert RoundTraining(batch_size=16).pair_steps(2) == 1 and RoundTraining(pair_share=0).pair_steps(60) == 0


# 5 steps at a share of 0.4: 2 steps' texts (4 a step) on pairs, as 1 step of 16 pairs
def test_a_pair_share_trains_setfits_pairs_first_then_the_objective_for_the_steps_left(
    base_model, tmp_path, monkeypatch
):
    import st_contrastive.training as training_module

    calls, real_train = [], training_module.train

    def recorded(encoder, loss, dataset, settings, **kwargs):
        calls.append((type(loss).__name__, dataset, settings.max_steps, settings.batch_size))
        return real_train(encoder, loss, dataset, settings, **kwargs)

    monkeypatch.setattr(training_module, "train", recorded)
    training = tiny_rounds(pair_share=0.4)
    names = ["who", "where"]
    model = train_round("supcon-ce", base_model, TEXTS, LABELS, names, training, tmp_path / "c", seed=0, steps=5)
    (pair_loss, pairs, pair_steps, pair_batch), (loss, _, steps, batch) = calls
    assert (pair_loss, pair_steps, pair_batch) == ("CosineSimilarityLoss", 1, PAIRS_PER_STEP)
    assert (loss, steps, batch) == ("SCALeLoss", 3, 4) and model.steps == pair_steps + 3
    same = [LABELS[TEXTS.index(a)] == LABELS[TEXTS.index(b)] for a, b in zip(pairs["sentence1"], pairs["sentence2"])]
    assert pairs["label"] == [1.0 if s else 0.0 for s in same] and set(pairs["label"]) == {0.0, 1.0}  # SetFit's
    assert len(pairs) >= pair_steps * pair_batch  # fresh pairs for every step
    with pytest.raises(ValueError, match=r"pair_share=1: must be in \[0, 1\)"):
        RoundTraining(pair_share=1)


def test_without_a_pair_share_a_round_trains_the_objective_alone(base_model, tmp_path, monkeypatch):
    import st_contrastive.training as training_module

    losses, real_train = [], training_module.train
    monkeypatch.setattr(
        training_module,
        "train",
        lambda e, loss, *a, **k: (losses.append(type(loss).__name__), real_train(e, loss, *a, **k))[1],
    )
    training = tiny_rounds(pair_share=0)
    model = train_round("ce", base_model, TEXTS, LABELS, ["who", "where"], training, tmp_path / "c", seed=0, steps=2)
    assert losses == ["SCALeLoss"] and model.steps == 2
