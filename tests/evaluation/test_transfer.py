"""SentEval's transfer tasks: the loaders on the real shared files, pair features, the batched logistic regressions
against scikit-learn, C selection and nested cross-validation, and the TransferEvaluator."""

from __future__ import annotations

import csv

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold

from st_contrastive.evaluation.embedding_cache import EmbeddingCache
from st_contrastive.evaluation.evaluators import TransferEvaluator
from st_contrastive.evaluation.logistic_regression import fit_logistic_regressions
from st_contrastive.evaluation.transfer import (
    KFOLD_GRID,
    NESTED_CV_GRID,
    TransferProtocol,
    evaluate_transfer,
    load_transfer,
    nested_cv,
    pair_features,
    select_c,
)


@pytest.mark.parametrize(
    "task, sizes",
    [
        ("mr", {None: 10662}),
        ("cr", {None: 3771}),
        ("subj", {None: 10000}),
        ("mpqa", {None: 10603}),
        ("sst2", {"train": 6920, "dev": 872, "test": 1821}),
        ("sst5", {"train": 8544, "dev": 1101, "test": 2210}),
        ("trec", {"train": 5452, "test": 500}),
        ("mrpc", {"train": 4076, "test": 1725}),
    ],
)
def test_load_transfer_row_counts(task, sizes):
    data = load_transfer(task)
    if data.splits is None:
        assert len(data.texts) == len(data.labels) == sizes[None]
    else:
        assert {split: int((data.splits == split).sum()) for split in sizes} == sizes
    n_classes = {"sst5": 5, "trec": 6}.get(task, 2)
    assert set(np.unique(data.labels)) == set(range(n_classes))
    assert (data.texts_b is not None) == (task == "mrpc")


def test_load_transfer_keeps_leading_quotes_and_subsets_all_classes():
    data = load_transfer("mr")
    assert data.texts[123] == (
        '" extreme ops " exceeds expectations . good fun , good action , good acting , good dialogue , '
        "good pace , good cinematography ."
    )
    # MR is sorted by label: a subset must be random, not the first rows.
    small = load_transfer("mr", max_rows=50)
    assert len(small.texts) == 50 and set(small.labels) == {0, 1}
    assert small.texts == load_transfer("mr", max_rows=50).texts  # seeded
    sst = load_transfer("sst2", max_rows=30)
    assert {split: int((sst.splits == split).sum()) for split in ("train", "dev", "test")} == {
        "train": 30,
        "dev": 30,
        "test": 30,
    }
    with pytest.raises(ValueError, match="mr, cr, subj, mpqa, sst2, sst5, trec, mrpc"):
        load_transfer("sick-e")


def test_pair_features():
    u, v = np.array([[1.0, -2.0]]), np.array([[3.0, 1.0]])
    np.testing.assert_array_equal(pair_features(u, v), [[2.0, 3.0, 3.0, -2.0]])
    np.testing.assert_array_equal(pair_features(u, v, "full"), [[1.0, -2.0, 3.0, 1.0, 2.0, 3.0, 3.0, -2.0]])


def _toy_features(n: int, signal: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = rng.standard_normal((n, 20))
    X[:, 0] += signal * (2 * y - 1)
    return X.astype(np.float32), y


@pytest.mark.parametrize("n_classes", [2, 5])
def test_batched_logistic_regression_matches_sklearn(n_classes):
    rng = np.random.default_rng(n_classes)
    X = rng.standard_normal((300, 8)) @ rng.standard_normal((8, 8))  # correlated features, as embeddings are
    y = np.where(rng.random(300) < 0.7, X[:, :n_classes].argmax(axis=1), rng.integers(0, n_classes, 300))
    masks = np.ones((3, 300), dtype=bool)
    masks[1, :100] = False  # a problem on a subset of rows
    Cs = [0.25, 0.25, 8.0]
    fitted = fit_logistic_regressions(X, y, Cs, masks, tol=1e-8, max_iter=1000, dtype=torch.float64)
    for k, C in enumerate(Cs):
        reference = LogisticRegression(C=C, tol=1e-10, max_iter=10_000).fit(X[masks[k]], y[masks[k]])
        np.testing.assert_allclose(fitted.weights[k].numpy(), reference.coef_.T, atol=1e-4)
        np.testing.assert_allclose(fitted.intercepts[k].numpy(), reference.intercept_, atol=1e-4)
        np.testing.assert_array_equal(fitted.predict(X)[k], reference.predict(X))


def test_select_c_matches_sklearn_reference():
    X, y = _toy_features(300, signal=0.7)
    C, accuracy, classifier, fits, _ = select_c(X, y, grid=NESTED_CV_GRID, folds=5, seed=3)
    assert fits == 6 * len(NESTED_CV_GRID)  # 5 folds and the refit, for each C
    # Reference: SentEval's loop, one scikit-learn classifier per (C, fold).
    folds = list(StratifiedKFold(n_splits=5, shuffle=True, random_state=3).split(X, y))
    reference = [
        np.mean([LogisticRegression(C=c, tol=1e-8).fit(X[tr], y[tr]).score(X[va], y[va]) for tr, va in folds]) * 100
        for c in NESTED_CV_GRID
    ]
    assert C == NESTED_CV_GRID[int(np.argmax(reference))]
    assert accuracy == pytest.approx(max(reference))
    refit = LogisticRegression(C=C, tol=1e-8).fit(X, y)
    np.testing.assert_allclose(classifier.weights[0, :, 0].numpy(), refit.coef_[0], atol=1e-3)  # float32, tol 1e-4


def test_nested_cv_accuracy_tracks_signal_and_picks_c_from_grid():
    X, y = _toy_features(400, signal=3.0)
    separable = nested_cv(X, y, folds=5, inner_folds=3)
    assert separable["accuracy"] > 95
    assert len(separable["C"]) == 5 and set(separable["C"]) <= set(NESTED_CV_GRID)
    noise = nested_cv(*_toy_features(400, signal=0.0), folds=5, inner_folds=3)
    assert 35 < noise["accuracy"] < 65


def _sklearn_test_score(X, y, train, test, C):
    """Reference: scikit-learn's LogisticRegression(C) on features standardized with the training part."""
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(X[train])
    classifier = LogisticRegression(C=C, tol=1e-8, max_iter=5000).fit(scaler.transform(X[train]), y[train])
    return classifier.predict(scaler.transform(X[test]))


def test_evaluate_transfer_on_small_slices(tiny_model):
    from sklearn.metrics import f1_score

    cache = EmbeddingCache(tiny_model, batch_size=32)
    cv = evaluate_transfer(tiny_model, "cr", TransferProtocol(folds=2), max_rows=90, cache=cache)
    assert cv["n"] == 90 and len(cv["C"]) == 2 and set(cv["C"]) <= set(NESTED_CV_GRID)
    split = evaluate_transfer(tiny_model, "sst5", max_rows=40, cache=cache)
    assert split["C"] in NESTED_CV_GRID and (split["n_train"], split["n_dev"], split["n_test"]) == (40, 40, 40)
    data = load_transfer("sst5", max_rows=40)
    predicted = _sklearn_test_score(
        cache.encode(data.texts), data.labels, data.splits == "train", data.splits == "test", split["C"]
    )
    expected = (predicted == data.labels[data.splits == "test"]).mean() * 100
    assert abs(split["accuracy"] - expected) <= 100 / 40 + 1e-9  # at most one of 40 test sentences apart
    mrpc = evaluate_transfer(tiny_model, "mrpc", TransferProtocol(folds=2), max_rows=60, cache=cache)
    assert mrpc["C"] in KFOLD_GRID and mrpc["n_test"] == 60
    data = load_transfer("mrpc", max_rows=60)
    X = pair_features(cache.encode(data.texts), cache.encode(data.texts_b))
    test = data.splits == "test"
    predicted = _sklearn_test_score(X, data.labels, data.splits == "train", test, mrpc["C"])
    assert abs(mrpc["accuracy"] - (predicted == data.labels[test]).mean() * 100) <= 100 / 60 + 1e-9
    assert abs(mrpc["f1"] - f1_score(data.labels[test], predicted) * 100) <= 5  # F1 moves more per sentence


def test_transfer_evaluator_returns_prefixed_metrics(tiny_model, tmp_path):
    evaluator = TransferEvaluator("mrpc", protocol=TransferProtocol(folds=2), max_rows=60)
    metrics = evaluator(tiny_model, output_path=str(tmp_path), epoch=1, steps=10)
    assert set(metrics) == {"mrpc_accuracy", "mrpc_dev_accuracy", "mrpc_f1"}
    assert evaluator.primary_metric == "mrpc_accuracy"
    direct = evaluate_transfer(tiny_model, "mrpc", TransferProtocol(folds=2), max_rows=60)
    for key in ("accuracy", "dev_accuracy", "f1"):  # the evaluator reports what the function computes, as fractions
        assert metrics[f"mrpc_{key}"] == pytest.approx(direct[key] / 100)
    with open(tmp_path / evaluator.csv_file, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["epoch", "steps", "accuracy", "dev_accuracy", "f1"] and rows[1][:2] == ["1", "10"]
