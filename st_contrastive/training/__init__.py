from st_contrastive.training.trainer import LOSS_STATE_NAME, ContrastiveTrainer

__all__ = ["LOSS_STATE_NAME", "ContrastiveTrainer"]
