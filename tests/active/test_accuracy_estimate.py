"""The accuracy estimate of a run without a test split, against the naive loop it stands for: scikit-learn's
stratified folds, the round's training on all but one fold, accuracy on that fold."""

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold
from support_tickets import SUPPORT

from st_contrastive.active.accuracy_estimate import cross_validated_accuracy
from st_contrastive.config.scale import RoundTraining
from st_contrastive.scale.round_training import round_steps, train_round

TRAINING = RoundTraining(epochs=1, from_base_epochs=1, min_steps_per_class=0, batch_size=4)
pytestmark = pytest.mark.usefixtures("short_rounds")  # one epoch: at least 2 steps, not the fixed 10
NAMES = sorted(SUPPORT)
TEXTS = [text for name in NAMES for text in SUPPORT[name][:4]]
LABELS = [i for i, _ in enumerate(NAMES) for _ in range(4)]


def test_the_estimate_is_the_mean_and_spread_of_held_out_fold_accuracies(base_model, tmp_path):
    estimate = cross_validated_accuracy("ce", base_model, TEXTS, LABELS, NAMES, TRAINING, 3, 7, tmp_path / "cv")
    scores = []
    folds = StratifiedKFold(3, shuffle=True, random_state=7).split(np.zeros(len(LABELS)), LABELS)
    for fold, (train, held_out) in enumerate(folds):
        model = train_round(
            "ce",
            base_model,
            [TEXTS[i] for i in train],
            [LABELS[i] for i in train],
            NAMES,
            TRAINING,
            tmp_path / "naive",
            7 + fold,
            round_steps(len(train), len(NAMES), TRAINING),
        )
        predicted = model.proba([TEXTS[i] for i in held_out]).argmax(axis=1)
        scores.append(100 * np.mean(predicted == np.asarray(LABELS)[held_out]))
    assert estimate == {
        "accuracy": round(float(np.mean(scores)), 2),
        "std": round(float(np.std(scores)), 2),
        "folds": 3,
        "labelled": 12,
    }


def test_folds_shrink_to_the_rarest_label_and_one_row_of_a_label_gives_no_estimate(base_model, tmp_path):
    two_each = [0, 1, 4, 5, 8, 9]
    estimate = cross_validated_accuracy(
        "ce", base_model, [TEXTS[i] for i in two_each], [LABELS[i] for i in two_each], NAMES, TRAINING, 5, 0, tmp_path
    )
    assert estimate["folds"] == 2
    one_bug = [0, 1, 4, 8, 9]
    assert (
        cross_validated_accuracy(
            "ce", base_model, [TEXTS[i] for i in one_bug], [LABELS[i] for i in one_bug], NAMES, TRAINING, 5, 0, tmp_path
        )
        is None
    )
