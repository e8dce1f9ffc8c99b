"""STS and SentEval-style transfer evaluation: by task name, or as sentence-transformers evaluators."""

from st_contrastive.evaluation.embedding_cache import EmbeddingCache
from st_contrastive.evaluation.evaluators import TransferEvaluator
from st_contrastive.evaluation.sts import load_sts, sts_evaluator, sts_spearman
from st_contrastive.evaluation.tasks import VALID_TASKS, averages, evaluate_model, expand_tasks, main_score
from st_contrastive.evaluation.transfer import TRANSFER_TASKS, TransferProtocol, evaluate_transfer, load_transfer

__all__ = [
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
