"""STS and SentEval-style transfer evaluation: by task name, or as sentence-transformers evaluators.

This package imports torch and scikit-learn; the task names, SentEval's protocol and how scores are summarised are
declared in :mod:`st_contrastive.config.evaluation`, which does not, so commands check task names first.
"""

from st_contrastive.config.evaluation import (
    SHORTCUTS,
    TRANSFER_TASKS,
    VALID_TASKS,
    TransferProtocol,
    averages,
    expand_tasks,
    main_score,
)
from st_contrastive.evaluation.embedding_cache import EmbeddingCache
from st_contrastive.evaluation.evaluators import TransferEvaluator
from st_contrastive.evaluation.sts import load_sts, sts_evaluator, sts_spearman
from st_contrastive.evaluation.tasks import evaluate_model
from st_contrastive.evaluation.transfer import evaluate_transfer, load_transfer

__all__ = [
    "SHORTCUTS",
    "TRANSFER_TASKS",
    "VALID_TASKS",
    "EmbeddingCache",
    "TransferEvaluator",
    "TransferProtocol",
    "averages",
    "evaluate_model",
    "evaluate_transfer",
    "expand_tasks",
    "load_sts",
    "load_transfer",
    "main_score",
    "sts_evaluator",
    "sts_spearman",
]
