"""Each acquisition function on hand-made probabilities or embeddings picks the rows worked out by hand."""

import math

import numpy as np
import pytest

from st_contrastive.scale import ACQUISITIONS, PoolModel, acquire

# Rows: A ties its two best classes; B is the most spread out; C is sure; D leans to one class.
PROBA = np.array([[0.5, 0.5, 0.0], [0.4, 0.3, 0.3], [0.9, 0.05, 0.05], [0.6, 0.4, 0.0]])
A, B, C, D = range(4)


class FixedModel:
    """A round model whose texts are row numbers, scored by fixed arrays (embeddings map back to their rows)."""

    def __init__(self, proba, dropout_proba=None, embeddings=None):
        self.fixed_proba, self.dropout_proba, self.embeddings = proba, dropout_proba, embeddings

    def embed(self, texts):
        return self.embeddings[[int(t) for t in texts]]

    def proba_of(self, embeddings):
        rows = [int(np.flatnonzero((self.embeddings == e).all(axis=1))[0]) for e in embeddings]
        return self.fixed_proba[rows]

    def proba(self, texts, dropout_samples=None):
        return (self.dropout_proba if dropout_samples else self.fixed_proba)[[int(t) for t in texts]]


def fixed_model(proba=PROBA, dropout_proba=None, embeddings=None) -> PoolModel:
    return PoolModel([str(i) for i in range(len(proba))], FixedModel(proba, dropout_proba, embeddings))


def entropy(p):
    return -sum(x * math.log(x) for x in p if x > 0)


@pytest.mark.parametrize(("name", "expected"), [("entropy", B), ("least-confidence", B), ("margin", A)])
def test_uncertainty_acquisitions_pick_the_hand_worked_row(name, expected):
    picked = acquire(name, fixed_model(), [A, B, C, D], [], [], n=1, seed=0)
    assert picked.ids == [expected]


def test_entropy_records_each_rows_entropy_and_never_picks_a_labelled_row():
    picked = acquire("entropy", fixed_model(), [A, C, D], [B], [0], n=2, seed=0)  # B is labelled already
    assert sorted(picked.ids) == [A, D]  # entropies A 0.693, D 0.673, C 0.394
    assert picked.scores == pytest.approx([entropy(PROBA[i]) for i in picked.ids])


def test_bald_prefers_disagreeing_dropout_samples_where_entropy_sees_a_tie():
    # Both rows average to (0.5, 0.5); only row 1's dropout samples disagree with each other.
    mean = np.array([[0.5, 0.5], [0.5, 0.5], [0.9, 0.1]])
    samples = np.array([[[0.5, 0.5]] * 4, [[1.0, 0.0], [0.0, 1.0]] * 2, [[0.9, 0.1]] * 4])
    assert acquire("bald", fixed_model(mean, samples), [0, 1, 2], [], [], n=1, seed=0, bald_samples=4).ids == [1]


def test_coreset_is_k_center_greedy_from_the_labelled_rows():
    angles = np.radians([0, 10, 90, 180, 170])  # row 0 labelled; the rest on the unit circle
    embeddings = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    picked = acquire(
        "coreset", fixed_model(np.full((5, 2), 0.5), embeddings=embeddings), [1, 2, 3, 4], [0], [0], n=2, seed=0
    )
    assert picked.ids == [3, 2]  # farthest from 0° is 180°; then 90° is 90° from both centres


def test_random_is_seeded_without_repeats_and_only_from_the_unlabelled():
    unlabelled = list(range(10, 60))
    first = acquire("random", None, unlabelled, [0, 1], [0, 1], n=20, seed=7)
    assert first.ids == acquire("random", None, unlabelled, [0, 1], [0, 1], n=20, seed=7).ids
    assert first.ids != acquire("random", None, unlabelled, [0, 1], [0, 1], n=20, seed=8).ids
    assert len(set(first.ids)) == 20 and set(first.ids) <= set(unlabelled)


def test_bad_requests_are_refused():
    with pytest.raises(ValueError, match="only 2 are unlabelled"):
        acquire("entropy", fixed_model(), [A, B], [], [], n=3, seed=0)
    with pytest.raises(ValueError, match="acquisition='badge': choose one of random, entropy"):
        acquire("badge", fixed_model(), [A, B], [], [], n=1, seed=0)
    assert set(ACQUISITIONS) == {
        "random",
        "entropy",
        "least-confidence",
        "margin",
        "bald",
        "coreset",
        "balanced-entropy",
        "kmeans",
    }


def test_balanced_entropy_spreads_picks_over_the_predicted_classes_the_labelled_set_lacks():
    # Rows 0-3 are predicted class 0 (the most uncertain rows), 4-5 class 1, 6 class 2; two labels of class 0 exist.
    proba = np.array(
        [
            [0.4, 0.3, 0.3],
            [0.45, 0.3, 0.25],
            [0.5, 0.25, 0.25],
            [0.6, 0.2, 0.2],
            [0.1, 0.8, 0.1],
            [0.2, 0.7, 0.1],
            [0.05, 0.05, 0.9],
        ]
    )
    unlabelled = list(range(7))
    assert acquire("entropy", fixed_model(proba), unlabelled, [], [], n=3, seed=0).ids == [0, 1, 2]
    picked = acquire("balanced-entropy", fixed_model(proba), unlabelled, [7, 8], [0, 0], n=4, seed=0)
    # class 1 and 2 have no labels: each gets its most uncertain row first (5 before 4), then 1 vs 1 vs 1 labels+picks
    # ties go to class 1 (its next row, 4), then class 2 has none left and class 0 has 2: class 0's best row.
    assert picked.ids == [5, 6, 4, 0]
    assert picked.scores == pytest.approx([entropy(proba[i]) for i in picked.ids])


def test_kmeans_picks_one_row_per_cluster_and_the_same_rows_for_the_same_seed():
    # Three tight clusters on the unit circle; two rows are labelled already and are never picked.
    angles = np.radians([0, 2, 4, 120, 122, 124, 240, 242, 244, 1, 121])
    embeddings = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    model = fixed_model(np.full((11, 2), 0.5), embeddings=embeddings)
    first = acquire("kmeans", model, list(range(9)), [9, 10], [0, 1], n=3, seed=5)
    assert sorted(np.array(first.ids) // 3) == [0, 1, 2]  # one from each cluster
    state = np.random.get_state()[1].copy()
    assert acquire("kmeans", model, list(range(9)), [9, 10], [0, 1], n=3, seed=5).ids == first.ids
    assert (np.random.get_state()[1] == state).all()  # numpy's global generator is left as it was


def test_a_missing_small_text_is_named_before_a_round_trains(monkeypatch):
    """Random and balanced entropy are ours; any other acquisition needs small-text, and without it the check names
    the extra (the loop calls it before the first round)."""
    import sys

    from st_contrastive.extras import MissingExtra
    from st_contrastive.scale.acquisition import check_installed

    monkeypatch.setitem(sys.modules, "small_text.query_strategies", None)  # as if small-text were not installed
    check_installed(["random", "balanced-entropy"])
    with pytest.raises(MissingExtra, match=r"needs the 'active' extra \(small_text is not installed\)"):
        check_installed(["random", "kmeans"])
