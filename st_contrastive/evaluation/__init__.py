"""STS and SentEval-style transfer evaluation: by task name, or as sentence-transformers evaluators."""

from typing import TYPE_CHECKING

from st_contrastive.evaluation.protocol import (
    SHORTCUTS,
    TRANSFER_TASKS,
    VALID_TASKS,
    TransferProtocol,
    averages,
    expand_tasks,
    main_score,
)
from st_contrastive.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from st_contrastive.evaluation.embedding_cache import EmbeddingCache
    from st_contrastive.evaluation.evaluators import TransferEvaluator
    from st_contrastive.evaluation.sts import load_sts, sts_evaluator, sts_spearman
    from st_contrastive.evaluation.tasks import evaluate_model
    from st_contrastive.evaluation.transfer import evaluate_transfer, load_transfer

# Task names are checked before anything heavy loads; the evaluation itself imports torch and scikit-learn.
__getattr__ = lazy_exports(__name__, {
    "EmbeddingCache": "embedding_cache", "TransferEvaluator": "evaluators", "load_sts": "sts",
    "sts_evaluator": "sts", "sts_spearman": "sts", "evaluate_model": "tasks",
    "evaluate_transfer": "transfer", "load_transfer": "transfer",
})

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
