"""Each acquisition function on hand-made probabilities or embeddings picks the rows worked out by hand."""

import math

import numpy as np
import pytest

from st_contrastive.active import ACQUISITIONS, PoolModel, acquire

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
    picked = acquire("coreset", fixed_model(np.full((5, 2), 0.5), embeddings=embeddings), [1, 2, 3, 4], [0], [0],
                     n=2, seed=0)
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
    with pytest.raises(ValueError, match="unknown acquisition 'badge'"):
        acquire("badge", fixed_model(), [A, B], [], [], n=1, seed=0)
    assert set(ACQUISITIONS) == {"random", "entropy", "least-confidence", "margin", "bald", "coreset"}
