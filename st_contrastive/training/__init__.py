"""What sentence-transformers' trainer lacks for losses that own parameters, and the one training entry point."""

from st_contrastive.training.run import RecipeConfig, TrainResult, TrainSettings, add_training_arguments, train
from st_contrastive.training.trainer import LOSS_STATE_NAME, ContrastiveTrainer

__all__ = ["LOSS_STATE_NAME", "ContrastiveTrainer", "RecipeConfig", "TrainResult", "TrainSettings", "add_training_arguments", "train"]
