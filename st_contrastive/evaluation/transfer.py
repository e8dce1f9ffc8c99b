"""SentEval-style transfer tasks: logistic regression on frozen, standardized sentence embeddings.

Validation follows SentEval's scikit-learn path (``senteval/tools/validation.py``), with its C grids and seed:

* MR, CR, SUBJ, MPQA (no fixed split): ``folds``-fold stratified cross-validation; in each outer fold, C is picked
  by ``inner_folds``-fold CV on the training part from ``NESTED_CV_GRID`` = 2^-2 .. 2^3, then refit on that part.
  Accuracy is the mean over the outer test folds.
* SST-2, SST-5 (train/dev/test): C from ``NESTED_CV_GRID`` with the best dev accuracy, fit on train, scored on test.
* TREC, MRPC (train/test): C from ``KFOLD_GRID`` = 2^-1 .. 2^5 by ``folds``-fold CV on train, refit on train,
  scored on test. MRPC reports accuracy and F1 of the paraphrase class.

The classifier is scikit-learn's ``LogisticRegression(C)`` objective (L2, multinomial), solved by
:mod:`st_contrastive.evaluation.logistic_regression` for a whole C grid x folds at once: same optimum, ~24x
faster than separate scikit-learn fits on two CPU cores. MRPC pair features are SentEval's ``(|u - v|, u * v)``
by default; ``mrpc_features="full"`` gives ``(u, v, |u - v|, u * v)``. Features are standardized with statistics
of the training part only (SentEval does not standardize, so C means something slightly different here).
Ties between C values go to the smaller C, as SentEval's argmax does. Accuracies are x 100.
"""

from __future__ import annotations

import csv
import warnings
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import f1_score
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import StandardScaler

from st_contrastive.config.evaluation import MRPC_FEATURES, SEED, SENTEVAL, TRANSFER_TASKS, TransferProtocol
from st_contrastive.data_dir import data_file
from st_contrastive.evaluation.embedding_cache import EmbeddingCache
from st_contrastive.evaluation.logistic_regression import LogisticRegressions, fit_logistic_regressions

CV_TASKS = ("mr", "cr", "subj", "mpqa")
NESTED_CV_GRID = tuple(2.0**k for k in range(-2, 4))
KFOLD_GRID = tuple(2.0**k for k in range(-1, 6))

# task -> (columns it must have, splits it must have; () = no fixed split)
_LAYOUT = {
    **{task: (("text", "label"), ()) for task in CV_TASKS},
    "sst2": (("text", "label", "split"), ("train", "dev", "test")),
    "sst5": (("text", "label", "split"), ("train", "dev", "test")),
    "trec": (("text", "label", "split"), ("train", "test")),
    "mrpc": (("sentence1", "sentence2", "label", "split"), ("train", "test")),
}


@dataclass
class TransferData:
    """One transfer task: texts (first sentences for MRPC), integer labels, and the split of each row."""

    task: str
    texts: list[str]
    labels: np.ndarray
    splits: np.ndarray | None  # None for the cross-validation tasks
    texts_b: list[str] | None = None  # second sentences (MRPC only)


def load_transfer(task: str, max_rows: int | None = None, seed: int = SEED) -> TransferData:
    """Read ``transfer/<task>.tsv``; ``max_rows`` keeps a seeded random subset of at most that many rows per split.

    A random subset rather than the first rows, because the files are sorted by label.
    """
    if task not in _LAYOUT:
        raise ValueError(f"Unknown transfer task {task!r}; valid tasks: {', '.join(TRANSFER_TASKS)}")
    columns, splits = _LAYOUT[task]
    path = data_file(f"transfer/{task}.tsv")
    with open(path, encoding="utf-8", newline="") as f:
        # Unquoted TSV: MR, SUBJ and MRPC have sentences starting with a literal '"'.
        reader = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        missing = set(columns) - set(reader.fieldnames or ())
        if missing:
            raise ValueError(f"{path} lacks column(s) {', '.join(sorted(missing))}")
        rows = []
        for line, row in enumerate(reader, start=2):
            if None in row or None in row.values():
                raise ValueError(f"{path}:{line}: expected {len(reader.fieldnames)} tab-separated fields")
            if splits and row["split"] not in splits:
                raise ValueError(f"{path}:{line}: unknown split {row['split']!r}; expected one of {', '.join(splits)}")
            rows.append(row)

    if max_rows is not None:
        rows = _subset(rows, max_rows, seed, by_split=bool(splits))
    first = "sentence1" if task == "mrpc" else "text"
    return TransferData(
        task=task,
        texts=[row[first] for row in rows],
        labels=np.array([int(row["label"]) for row in rows]),
        splits=np.array([row["split"] for row in rows]) if splits else None,
        texts_b=[row["sentence2"] for row in rows] if task == "mrpc" else None,
    )


def _subset(rows: list[dict], max_rows: int, seed: int, by_split: bool) -> list[dict]:
    rng = np.random.default_rng(seed)
    groups: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        groups.setdefault(row["split"] if by_split else "", []).append(index)
    keep = []
    for indices in groups.values():
        keep.extend(rng.permutation(indices)[:max_rows].tolist())
    return [rows[index] for index in sorted(keep)]


def pair_features(u: np.ndarray, v: np.ndarray, mode: str = "senteval") -> np.ndarray:
    """Sentence-pair features: ``(|u - v|, u * v)`` as SentEval's MRPC, or ``(u, v, |u - v|, u * v)`` ("full")."""
    if mode not in MRPC_FEATURES:
        raise ValueError(f"Unknown pair feature mode {mode!r}; valid: {', '.join(MRPC_FEATURES)}")
    parts = [np.abs(u - v), u * v]
    return np.concatenate([u, v, *parts] if mode == "full" else parts, axis=1)


def _standardize(train: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    scaler = StandardScaler().fit(train)
    return [scaler.transform(x) for x in (train, *others)]


class Selection(NamedTuple):
    C: float
    dev_accuracy: float  # x 100
    classifier: LogisticRegressions  # refit on all rows with C
    fits: int  # logistic regressions solved
    unconverged: int  # of those, how many stopped above the gradient tolerance


def select_c(X: np.ndarray, y: np.ndarray, grid=NESTED_CV_GRID, folds: int = 10, seed: int = SEED) -> Selection:
    """Pick C by stratified ``folds``-fold CV and refit on all of ``(X, y)`` with it.

    C is the one of ``grid`` with the best mean validation accuracy (the smallest on ties, as SentEval's argmax).
    The refits for every C are solved in the same batch as the fold fits, so refitting costs no extra pass.
    """
    grid = sorted(grid)
    splits = list(StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed).split(X, y))
    masks = np.zeros((len(splits) + 1, len(grid), len(y)), dtype=bool)
    for f, (train, _) in enumerate(splits):
        masks[f, :, train] = True
    masks[-1] = True  # the refits on all rows
    classifiers = fit_logistic_regressions(X, y, grid * (len(splits) + 1), masks.reshape(-1, len(y)))
    predictions = classifiers.predict(X).reshape(len(splits) + 1, len(grid), len(y))
    accuracy = np.mean(
        [(predictions[f][:, valid] == y[valid]).mean(axis=1) for f, (_, valid) in enumerate(splits)], axis=0
    )
    best = int(np.argmax(accuracy))
    return Selection(
        C=grid[best],
        dev_accuracy=float(accuracy[best] * 100),
        classifier=classifiers[len(splits) * len(grid) + best],
        fits=len(classifiers),
        unconverged=int((~classifiers.converged).sum()),
    )


def nested_cv(
    X: np.ndarray,
    y: np.ndarray,
    grid=NESTED_CV_GRID,
    folds: int = 10,
    inner_folds: int | None = None,
    seed: int = SEED,
) -> dict:
    """SentEval's inner k-fold classifier: outer CV for the score, inner CV on each training part for C."""
    test_accuracy, selections = [], []
    for train, test in StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed).split(X, y):
        X_train, X_test = _standardize(X[train], X[test])
        selection = select_c(X_train, y[train], grid, inner_folds or folds, seed)
        test_accuracy.append(np.mean(selection.classifier.predict(X_test)[0] == y[test]) * 100)
        selections.append(selection)
    return {
        "accuracy": float(np.mean(test_accuracy)),
        "dev_accuracy": float(np.mean([s.dev_accuracy for s in selections])),
        "C": [s.C for s in selections],
        "n": len(y),
        "fits": sum(s.fits for s in selections),
        "unconverged": sum(s.unconverged for s in selections),
    }


def train_dev_test(X_train, y_train, X_dev, y_dev, X_test, y_test, grid=NESTED_CV_GRID) -> dict:
    """SentEval's split classifier: C with the best dev accuracy, fit on train, scored on test."""
    X_train, X_dev, X_test = _standardize(X_train, X_dev, X_test)
    grid = sorted(grid)
    classifiers = fit_logistic_regressions(X_train, y_train, grid)
    dev_accuracy = (classifiers.predict(X_dev) == y_dev).mean(axis=1) * 100
    best = int(np.argmax(dev_accuracy))
    return {
        "accuracy": float(np.mean(classifiers[best].predict(X_test)[0] == y_test) * 100),
        "dev_accuracy": float(dev_accuracy[best]),
        "C": grid[best],
        "n_train": len(y_train),
        "n_dev": len(y_dev),
        "n_test": len(y_test),
        "fits": len(classifiers),
        "unconverged": int((~classifiers.converged).sum()),
    }


def train_test(X_train, y_train, X_test, y_test, grid=KFOLD_GRID, folds: int = 10, seed: int = SEED) -> dict:
    """SentEval's k-fold classifier: C by CV on train, refit on train, scored on test (predictions included)."""
    X_train, X_test = _standardize(X_train, X_test)
    selection = select_c(X_train, y_train, grid, folds, seed)
    predictions = selection.classifier.predict(X_test)[0]
    return {
        "accuracy": float(np.mean(predictions == y_test) * 100),
        "dev_accuracy": selection.dev_accuracy,
        "C": selection.C,
        "n_train": len(y_train),
        "n_test": len(y_test),
        "fits": selection.fits,
        "unconverged": selection.unconverged,
        "predictions": predictions,
    }


def evaluate_transfer(
    model,
    task: str,
    protocol: TransferProtocol = SENTEVAL,
    batch_size: int = 32,
    max_rows: int | None = None,
    cache: EmbeddingCache | None = None,
) -> dict:
    """Accuracy x 100 (and F1 x 100 for MRPC) of ``model``'s frozen embeddings on one transfer task.

    ``max_rows`` evaluates a random subset (quick runs only). Pass a shared ``cache`` to encode sentences common
    to several tasks once.
    """
    data = load_transfer(task, max_rows=max_rows, seed=protocol.seed)
    cache = cache if cache is not None else EmbeddingCache(model, batch_size=batch_size)
    return transfer_scores(data, cache, protocol)


def transfer_scores(data: TransferData, cache: EmbeddingCache, protocol: TransferProtocol = SENTEVAL) -> dict:
    """Encode ``data`` through ``cache`` and run the validation scheme of its task (see the module docstring)."""
    X = cache.encode(data.texts)
    if data.texts_b is not None:
        X = pair_features(X, cache.encode(data.texts_b), mode=protocol.mrpc_features)
    y = data.labels

    if data.splits is None:
        result = nested_cv(X, y, folds=protocol.folds, inner_folds=protocol.inner_folds, seed=protocol.seed)
    elif "dev" in set(data.splits):
        part = {name: data.splits == name for name in ("train", "dev", "test")}
        result = train_dev_test(
            X[part["train"]], y[part["train"]], X[part["dev"]], y[part["dev"]], X[part["test"]], y[part["test"]]
        )
    else:
        train, test = data.splits == "train", data.splits == "test"
        result = train_test(X[train], y[train], X[test], y[test], folds=protocol.folds, seed=protocol.seed)
        predictions = result.pop("predictions")
        if data.task == "mrpc":
            result["f1"] = float(f1_score(y[test], predictions) * 100)
    if result["unconverged"]:
        # One counted warning per task rather than one per batch of fits.
        warnings.warn(
            f"{data.task}: {result['unconverged']} of {result['fits']} logistic regressions stopped above "
            "scikit-learn's default gradient tolerance (see fit_logistic_regressions); scores are those of the "
            "stopped fits",
            ConvergenceWarning,
            stacklevel=2,
        )
    return result
