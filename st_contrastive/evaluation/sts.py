"""Semantic textual similarity: Spearman correlation between cosine similarity and gold scores.

Tasks are the shared STS-B (scores 0-5) and SICK-R (relatedness 1-5) files, a Hugging Face dataset id such as
``sentence-transformers/stsb`` or a local dataset directory (columns ``sentence1``, ``sentence2`` and a score).
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr
from sentence_transformers.sentence_transformer.evaluation import EmbeddingSimilarityEvaluator

from st_contrastive.config.evaluation import SHARED_STS, SPLITS
from st_contrastive.data_dir import data_file
from st_contrastive.evaluation.embedding_cache import EmbeddingCache

# Score column names used by Hub copies of STS-B / SICK-R, tried in this order.
SCORE_COLUMNS = ("score", "relatedness", "relatedness_score", "similarity_score", "label")


def load_sts(task: str, split: str = "test", max_rows: int | None = None) -> tuple[list[str], list[str], list[float]]:
    """``(sentences1, sentences2, gold_scores)`` of one STS split; ``max_rows`` keeps the first pairs only."""
    if split not in SPLITS:
        raise ValueError(f"Unknown STS split {split!r}; valid splits: {', '.join(SPLITS)}")
    if task in SHARED_STS:
        sentences1, sentences2, scores = _read_shared(task, split)
    elif Path(task).is_dir() or "/" in task:
        sentences1, sentences2, scores = _read_dataset(task, split)
    else:
        raise ValueError(
            f"Unknown STS task {task!r}; valid: {', '.join(SHARED_STS)}, a Hugging Face dataset id "
            "(e.g. 'sentence-transformers/stsb') or a local dataset directory"
        )
    if max_rows is not None:
        sentences1, sentences2, scores = sentences1[:max_rows], sentences2[:max_rows], scores[:max_rows]
    return sentences1, sentences2, scores


def _read_shared(task: str, split: str) -> tuple[list[str], list[str], list[float]]:
    pattern, score_column, _ = SHARED_STS[task]
    path = data_file(pattern.format(split=split))
    sentences1, sentences2, scores = [], [], []
    with open(path, encoding="utf-8", newline="") as f:
        # The files are unquoted: a sentence may start with a literal '"'.
        reader = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        for line, row in enumerate(reader, start=2):
            if None in row or None in row.values():
                raise ValueError(f"{path}:{line}: expected {len(reader.fieldnames)} tab-separated fields")
            sentences1.append(row["sentence1"])
            sentences2.append(row["sentence2"])
            scores.append(float(row[score_column]))
    return sentences1, sentences2, scores


def _read_dataset(task: str, split: str) -> tuple[list[str], list[str], list[float]]:
    """A Hub dataset id or a local dataset folder, read with ``datasets.load_dataset``."""
    from datasets import load_dataset

    splits = load_dataset(task)
    # Hub datasets call the dev split "validation".
    names = [name for name in (split, "validation" if split == "dev" else None) if name in splits]
    if not names:
        raise ValueError(f"{task} has no {split!r} split; it has {', '.join(splits)}")
    dataset = splits[names[0]]
    score_column = next((c for c in SCORE_COLUMNS if c in dataset.column_names), None)
    missing = {"sentence1", "sentence2"} - set(dataset.column_names)
    if missing or score_column is None:
        raise ValueError(
            f"{task} ({names[0]}) needs columns sentence1, sentence2 and one of {', '.join(SCORE_COLUMNS)}; "
            f"it has {', '.join(dataset.column_names)}"
        )
    return list(dataset["sentence1"]), list(dataset["sentence2"]), [float(s) for s in dataset[score_column]]


def cosine_spearman(embeddings1: np.ndarray, embeddings2: np.ndarray, gold_scores) -> float:
    """Spearman correlation x 100 between the pairwise cosine similarities and the gold scores."""
    a = np.asarray(embeddings1, dtype=np.float64)
    b = np.asarray(embeddings2, dtype=np.float64)
    # A zero vector has cosine 0 with everything rather than NaN.
    norms = np.maximum(np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1), 1e-12)
    cosines = (a * b).sum(axis=1) / norms
    return float(spearmanr(cosines, np.asarray(gold_scores, dtype=np.float64)).statistic * 100)


def sts_spearman(
    model,
    sentences1: list[str],
    sentences2: list[str],
    gold_scores: list[float],
    batch_size: int = 32,
    cache: EmbeddingCache | None = None,
) -> float:
    """Cosine Spearman x 100 of ``model`` on sentence pairs; each distinct sentence is encoded once."""
    if not len(sentences1) == len(sentences2) == len(gold_scores):
        raise ValueError(
            f"sentences1, sentences2 and gold_scores differ in length: "
            f"{len(sentences1)}, {len(sentences2)}, {len(gold_scores)}"
        )
    cache = cache if cache is not None else EmbeddingCache(model, batch_size=batch_size)
    return cosine_spearman(cache.encode(sentences1), cache.encode(sentences2), gold_scores)


def sts_evaluator_name(task: str, split: str) -> str:
    """``sts-b-dev``, ``sick-r-test``; for a dataset id or folder its last path part, e.g. ``stsb-dev``."""
    base = SHARED_STS[task][2] if task in SHARED_STS else Path(task.rstrip("/")).name
    return f"{base}-{split}"


def sts_evaluator(
    task: str = "stsb",
    split: str = "dev",
    name: str | None = None,
    batch_size: int = 32,
    max_rows: int | None = None,
    **kwargs,
) -> EmbeddingSimilarityEvaluator:
    """sentence-transformers' ``EmbeddingSimilarityEvaluator`` on one STS split, cosine Spearman as primary metric.

    Pass it as ``evaluator=`` to ``SentenceTransformerTrainer``; its metrics are on ST's 0-1 scale, e.g.
    ``{"sts-b-dev_pearson_cosine": ..., "sts-b-dev_spearman_cosine": ...}``. Extra keyword arguments go to the
    evaluator (``show_progress_bar``, ``write_csv``, ...).
    """
    sentences1, sentences2, scores = load_sts(task, split, max_rows=max_rows)
    return EmbeddingSimilarityEvaluator(
        sentences1,
        sentences2,
        scores,
        batch_size=batch_size,
        main_similarity="cosine",
        name=name or sts_evaluator_name(task, split),
        **kwargs,
    )
