"""How good the model is when the data has no test split: k-fold cross-validation on the labels given so far.

Each fold trains the round's objective from the base model, for the round's steps, on the other folds and scores
the held-out one; the estimate is the folds' mean accuracy and its spread. It estimates a model trained from the base
on these labels (a warm-started round model continues from earlier rounds), and acquisition picks hard rows, so it
is a cautious figure, not a test score. scikit-learn's StratifiedKFold makes the folds; the training is the loop's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def cross_validated_accuracy(
    objective: str,
    base_model: str,
    texts: list[str],
    labels: list[int],
    label_names: list[str],
    training,
    folds: int,
    seed: int,
    output_dir: str | Path,
) -> dict | None:
    """Mean and standard deviation (over folds) of the accuracy in %, with the number of folds and labels; ``None``
    when a label has fewer rows than two folds need."""
    from sklearn.model_selection import StratifiedKFold

    from st_contrastive.scale.round_training import round_steps, train_round

    counts = np.bincount(labels)
    k = min(folds, int(counts[counts > 0].min()))
    if k < 2:
        return None
    scores = []
    for fold, (train, held_out) in enumerate(
        StratifiedKFold(k, shuffle=True, random_state=seed).split(np.zeros(len(labels)), labels)
    ):
        model = train_round(
            objective,
            base_model,
            [texts[i] for i in train],
            [labels[i] for i in train],
            label_names,
            training,
            Path(output_dir) / f"fold-{fold}",
            seed + fold,
            round_steps(len(train), len(label_names), training),
        )
        predicted = model.proba([texts[i] for i in held_out]).argmax(axis=1)
        scores.append(100 * float(np.mean(predicted == np.asarray(labels)[held_out])))
    return {
        "accuracy": round(float(np.mean(scores)), 2),
        "std": round(float(np.std(scores)), 2),
        "folds": k,
        "labelled": len(labels),
    }
