"""Acquisition functions behind one call, ``acquire(...)``: small-text's query strategies where they fit.

small-text's strategies take a "classifier" with ``predict_proba(dataset)`` (and ``embed(dataset)`` for the
embedding-based ones) and a "dataset" they index with numpy arrays. Here the dataset is an array of pool row
ids and :class:`PoolModel` turns ids into texts for the model of the round. Random sampling is our own:
small-text's draws from numpy's global state, which a resumed process does not have; ours draws from a
generator seeded by (seed, round), so a resumed run acquires what an uninterrupted one would (k-means, which
draws from that global state too, runs under the same seed). Class-balanced entropy is our own as well: the
installed small-text (1.4) has no class balancer.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from st_contrastive.arguments import ArgumentError
from st_contrastive.config.scale import ACQUISITIONS
from st_contrastive.extras import require_extra


@dataclass
class PoolModel:
    """A round's model seen by small-text: class probabilities and embeddings of pool rows, by row id.

    ``model`` is the round's model (:class:`~st_contrastive.scale.round_training.RoundModel` or the SetFit one):
    ``embed(texts)``, ``proba_of(embeddings)``, and ``proba(texts, dropout_samples)`` for MC dropout.
    """

    texts: Sequence[str]
    model: Any

    def _texts(self, ids) -> list[str]:
        return [self.texts[i] for i in np.asarray(ids)]

    def predict_proba(self, ids, dropout_sampling: int | None = None) -> np.ndarray:
        if dropout_sampling:
            return self.model.proba(self._texts(ids), dropout_samples=dropout_sampling)
        return self.model.proba(self._texts(ids))

    def embed(self, ids, return_proba: bool = False, pbar=None, **_) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        embeddings = self.model.embed(self._texts(ids))
        return (embeddings, self.model.proba_of(embeddings)) if return_proba else embeddings  # one encoding


@dataclass
class Acquired:
    """Pool row ids to label next, and the score each got (``None`` where the strategy exposes none)."""

    ids: list[int]
    scores: list[float] | None


# The acquisitions written here; every other one is small-text's.
OWN_ACQUISITIONS = ("random", "balanced-entropy")


def small_text_strategies():
    """small-text's query strategies, imported when an acquisition needs them: the plugin imports without the extra."""
    return require_extra("small_text.query_strategies", "active")


def check_installed(names: Sequence[str]) -> None:
    """Refuse acquisitions ``names`` now, naming the extra to install, where one is small-text's and small-text is
    missing: before a round trains, not when its first acquisition comes."""
    if any(name not in OWN_ACQUISITIONS for name in names):
        small_text_strategies()


def strategy(name: str, bald_samples: int = 10):
    """small-text's query strategy for ``name`` (not ``random``, which is :func:`random_ids`)."""
    query_strategies = small_text_strategies()
    if name == "entropy":
        return query_strategies.PredictionEntropy()
    if name == "least-confidence":
        return query_strategies.LeastConfidence()
    if name == "margin":  # small-text's breaking ties: smallest gap between the two most probable classes
        return query_strategies.BreakingTies()
    if name == "bald":
        return query_strategies.BALD(dropout_samples=bald_samples)
    if name == "coreset":  # k-center greedy; euclidean on unit vectors orders pairs as cosine distance does
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # small-text warns that its default metric changed in 1.2
            return query_strategies.GreedyCoreset(distance_metric="euclidean", normalize=True)
    if name == "kmeans":  # the unlabelled rows nearest to n k-means centres of their embeddings (diversity)
        return query_strategies.EmbeddingKMeans(normalize=True)
    raise ArgumentError("acquisition", name, f"choose one of {', '.join(ACQUISITIONS)}")


def random_ids(unlabelled: Sequence[int], n: int, seed: int) -> list[int]:
    return [int(i) for i in np.random.default_rng(seed).choice(np.asarray(unlabelled), size=n, replace=False)]


def balanced_entropy_ids(proba: np.ndarray, unlabelled: Sequence[int], labels: Sequence[int], n: int) -> Acquired:
    """The most uncertain rows, spread over the predicted classes so that the labelled set grows balanced.

    Each pick goes to the class with the fewest rows so far (labelled, plus picked as predicted to be of that
    class), and takes that class's highest-entropy row; a class no unlabelled row is predicted as is skipped.
    Plain entropy after a 15-label round can spend a whole batch on one confusable class.
    """
    entropy = -(proba * np.log(np.clip(proba, 1e-12, None))).sum(axis=1)
    predicted = proba.argmax(axis=1)
    queues = {
        c: list(np.flatnonzero(predicted == c)[np.argsort(-entropy[predicted == c], kind="stable")])
        for c in range(proba.shape[1])
    }
    counts = np.bincount(np.asarray(labels, dtype=np.int64), minlength=proba.shape[1]).astype(float)
    picked: list[int] = []
    while len(picked) < n:
        c = min((c for c, queue in queues.items() if queue), key=lambda c: (counts[c], c))
        picked.append(int(queues[c].pop(0)))
        counts[c] += 1
    return Acquired([int(unlabelled[p]) for p in picked], [float(entropy[p]) for p in picked])


@contextmanager
def numpy_global_seed(seed: int) -> Iterator[None]:
    """numpy's global generator seeded for a strategy that draws from it, and restored after."""
    state = np.random.get_state()
    np.random.seed(seed % 2**32)
    try:
        yield
    finally:
        np.random.set_state(state)


def acquire(
    name: str,
    model: PoolModel | None,
    unlabelled: Sequence[int],
    labelled: Sequence[int],
    labels: Sequence[int],
    n: int,
    seed: int,
    bald_samples: int = 10,
) -> Acquired:
    """The ``n`` pool rows among ``unlabelled`` that acquisition ``name`` picks with ``model`` (the last round's).

    ``labelled`` and their ``labels`` are what coreset measures distances from. ``seed`` seeds random sampling.
    """
    if n > len(unlabelled):
        raise ValueError(f"asked to acquire {n} rows, but only {len(unlabelled)} are unlabelled")
    if name == "random":
        return Acquired(random_ids(unlabelled, n, seed), None)
    if name == "balanced-entropy":
        return balanced_entropy_ids(model.predict_proba(unlabelled), unlabelled, labels, n)
    query = strategy(name, bald_samples)
    unlabelled = np.asarray(unlabelled, dtype=np.int64)
    labelled = np.asarray(labelled, dtype=np.int64)
    if isinstance(query, small_text_strategies().EmbeddingBasedQueryStrategy):
        rows = np.concatenate([unlabelled, labelled])  # coreset needs the labelled rows' embeddings too
        with numpy_global_seed(seed):
            positions = query.query(
                model,
                rows,
                np.arange(len(unlabelled)),
                np.arange(len(unlabelled), len(rows)),
                np.asarray(labels),
                n=n,
                pbar=None,
            )
    else:  # scores only the unlabelled rows
        positions = query.query(
            model, unlabelled, np.arange(len(unlabelled)), np.array([], dtype=np.int64), np.asarray(labels), n=n
        )
    positions = np.asarray(positions)
    scores = getattr(query, "scores_", None)
    return Acquired(
        [int(unlabelled[p]) for p in positions], None if scores is None else [float(scores[p]) for p in positions]
    )
