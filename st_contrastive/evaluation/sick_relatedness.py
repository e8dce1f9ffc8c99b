"""SICK-R as SentEval scores it: a relatedness regressor trained on frozen pair features, not cosine similarity.

Tai et al. (2015)'s set-up, as in SentEval's ``SICKRelatednessEval``: features (|u − v|, u ∗ v); the gold score
y ∈ [1, 5] becomes a distribution p over the classes 1…5 (mass on ⌊y⌋ and ⌊y⌋ + 1, mean y); a softmax layer is
trained with Adam on the MSE between its output and p (batch 64), early-stopped on dev Pearson (patience 5
epochs); the prediction is the expected class. One change from SentEval: the features are standardised on
train (as for the transfer tasks here), so that embeddings of small magnitude (a Tree-LSTM's hidden states) do not
stall Adam's fixed step size: without it the regressor stopped early on some of them, at a negative dev Pearson.
Written here because scikit-learn has no soft-label softmax
regression, and SentEval itself is not a dependency.
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.stats import pearsonr, spearmanr
from sklearn.preprocessing import StandardScaler

from st_contrastive.config.evaluation import SEED
from st_contrastive.evaluation.embedding_cache import EmbeddingCache
from st_contrastive.evaluation.sts import load_sts

CLASSES = np.arange(1, 6, dtype=np.float64)


def score_distribution(scores: np.ndarray) -> np.ndarray:
    """Tai et al.'s sparse target: ``p[⌊y⌋] = ⌊y⌋ − y + 1``, ``p[⌊y⌋ + 1] = y − ⌊y⌋`` (classes 1…5)."""
    scores = np.asarray(scores, dtype=np.float64)
    floor = np.clip(np.floor(scores), 1, 4).astype(int)  # a score of 5 puts all its mass on the last class
    target = np.zeros((len(scores), len(CLASSES)))
    rows = np.arange(len(scores))
    target[rows, floor - 1] = floor + 1 - scores
    target[rows, floor] = scores - floor
    return target


def pair_features(cache: EmbeddingCache, first: list[str], second: list[str]) -> np.ndarray:
    u, v = cache.encode(first), cache.encode(second)
    return np.concatenate([np.abs(u - v), u * v], axis=1).astype(np.float32)


def fit_relatedness(X_train, y_train, X_dev, y_dev, seed: int = SEED, patience: int = 5, max_epochs: int = 200):
    """The softmax regressor early-stopped on dev Pearson; returns a ``predict(X) -> scores`` function."""
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    layer = torch.nn.Linear(X_train.shape[1], len(CLASSES))
    optimizer = torch.optim.Adam(layer.parameters())
    X, target = torch.from_numpy(X_train), torch.from_numpy(score_distribution(y_train)).float()
    classes = torch.from_numpy(CLASSES).float()

    def predict(features: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return (torch.softmax(layer(torch.from_numpy(features)), -1) @ classes).numpy()

    best, best_state, waited = -np.inf, None, 0
    for _ in range(max_epochs):
        for batch in torch.randperm(len(X), generator=generator).split(64):
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(torch.softmax(layer(X[batch]), -1), target[batch])
            loss.backward()
            optimizer.step()
        dev_r = pearsonr(predict(X_dev), y_dev).statistic
        if dev_r > best:
            best, best_state, waited = dev_r, {k: v.clone() for k, v in layer.state_dict().items()}, 0
        else:
            waited += 1
            if waited >= patience:
                break
    layer.load_state_dict(best_state)
    return predict


def evaluate_sick_relatedness(cache: EmbeddingCache, max_rows: int | None = None, seed: int = SEED) -> dict:
    """Pearson r, Spearman ρ (× 100) and MSE on SICK test of the regressor trained on SICK train (dev: SICK
    trial), as SentEval reports SICK-R."""
    splits = {split: load_sts("sick", split, max_rows=max_rows) for split in ("train", "dev", "test")}
    X = {split: pair_features(cache, a, b) for split, (a, b, _) in splits.items()}
    scaler = StandardScaler().fit(X["train"])
    X = {split: scaler.transform(features).astype(np.float32) for split, features in X.items()}
    y = {split: np.asarray(scores, dtype=np.float64) for split, (_, _, scores) in splits.items()}
    predict = fit_relatedness(X["train"], y["train"], X["dev"], y["dev"], seed=seed)
    predicted = predict(X["test"])
    return {
        "pearson": float(pearsonr(predicted, y["test"]).statistic * 100),
        "spearman": float(spearmanr(predicted, y["test"]).statistic * 100),
        "mse": float(np.mean((predicted - y["test"]) ** 2)),
        "dev_pearson": float(pearsonr(predict(X["dev"]), y["dev"]).statistic * 100),
        "n": len(y["test"]),
    }
