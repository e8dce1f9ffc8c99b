"""What sentence-transformers' trainer lacks for losses that own parameters, and the one training entry point."""

from typing import TYPE_CHECKING

from st_contrastive.lazy_exports import lazy_exports
from st_contrastive.training.settings import TrainSettings

if TYPE_CHECKING:
    from st_contrastive.training.interrupt import TrainingInterrupted
    from st_contrastive.training.run import TrainResult, train, train_heads_only
    from st_contrastive.training.trainer import LOSS_STATE_NAME, ContrastiveTrainer, optimized_parameters

# The trainer imports torch and sentence-transformers (seconds); recipes build their parsers from the settings alone.
__getattr__ = lazy_exports(__name__, {"TrainResult": "run", "train": "run", "train_heads_only": "run",
                                      "LOSS_STATE_NAME": "trainer", "TrainingInterrupted": "interrupt",
                                      "ContrastiveTrainer": "trainer", "optimized_parameters": "trainer"})

__all__ = ["LOSS_STATE_NAME", "ContrastiveTrainer", "TrainResult", "TrainSettings", "TrainingInterrupted",
           "optimized_parameters", "train", "train_heads_only"]
