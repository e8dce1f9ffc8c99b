"""What sentence-transformers' trainer lacks for losses that own parameters, and the one training entry point.

This package imports torch and sentence-transformers; the settings it trains with (:class:`TrainSettings`) are
declared in :mod:`st_contrastive.config.training`, which does not, so commands build their parsers without it.
"""

from st_contrastive.config.training import TrainSettings
from st_contrastive.training.interrupt import TrainingInterrupted
from st_contrastive.training.run import TrainResult, train, train_heads_only
from st_contrastive.training.trainer import LOSS_STATE_NAME, ContrastiveTrainer, optimized_parameters

__all__ = [
    "LOSS_STATE_NAME",
    "ContrastiveTrainer",
    "TrainResult",
    "TrainSettings",
    "TrainingInterrupted",
    "optimized_parameters",
    "train",
    "train_heads_only",
]
