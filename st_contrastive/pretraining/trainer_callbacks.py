"""What MLM pretraining adds to the transformers ``Trainer``'s loop: the held-out loss curve and a wall-clock stop."""

from __future__ import annotations

import logging
import time

from transformers import TrainerCallback

from st_contrastive.distributed import agree_with_rank_zero
from st_contrastive.pretraining.held_out import held_out_mlm_losses

logger = logging.getLogger(__name__)


class HeldOutLossLog(TrainerCallback):
    """Measure the held-out losses every ``every`` steps: the curve shows when the model leaves the unigram plateau.

    The measurements go into the trainer's ``log_history``, which every checkpoint saves (``trainer_state.json``)
    and a resume restores, so a resumed run keeps the curve measured before the interruption (:func:`held_out_log`).
    """

    def __init__(self, model, batches: list[dict], mask_token_id: int, every: int):
        self.model, self.batches, self.mask_token_id, self.every = model, batches, mask_token_id, every

    def on_step_end(self, args, state, control, **kwargs):
        # Called before the trainer saves this step's checkpoint, so the checkpoint holds this measurement too.
        if state.is_world_process_zero and state.global_step % self.every == 0:
            loss, mask_loss = held_out_mlm_losses(self.model, self.batches, self.mask_token_id)
            state.log_history.append(
                {"step": state.global_step, "held_out_loss": loss, "held_out_mask_token_loss": mask_loss}
            )
            logger.info("step %d: held-out MLM loss %.3f, [MASK]-token loss %.3f", state.global_step, loss, mask_loss)


def held_out_log(log_history: list[dict]) -> list[dict]:
    """The held-out losses :class:`HeldOutLossLog` measured, from the trainer's log (resumed runs included)."""
    return [
        {"step": entry["step"], "loss": entry["held_out_loss"], "mask_token_loss": entry["held_out_mask_token_loss"]}
        for entry in log_history
        if "held_out_loss" in entry
    ]


class StopAfterMinutes(TrainerCallback):
    """Stop training once ``minutes`` of wall-clock have passed since training began. Under torchrun / accelerate
    rank 0's clock decides for every rank: a rank that stopped alone would leave the others waiting for it."""

    def __init__(self, minutes: float):
        self.seconds = minutes * 60
        self.start = None
        self.stopped = False

    def on_train_begin(self, args, state, control, **kwargs):
        self.start = time.monotonic()

    def on_step_end(self, args, state, control, **kwargs):
        if agree_with_rank_zero(time.monotonic() - self.start >= self.seconds, args.device):
            control.should_training_stop = self.stopped = True
