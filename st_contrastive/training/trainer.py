"""A ``SentenceTransformerTrainer`` that also looks after parameters owned by the loss.

sentence-transformers 6.x optimizes a loss's own parameters (an MLM head, a classifier, a bilinear matrix) but
does not save them in checkpoints, restore them on resume, clip them with ``max_grad_norm``, or average their
gradients across DDP ranks. This trainer does all four, for any loss, and starts every rank from rank 0's copy of
them. It also tells a sampling collator each new epoch, lets it check the model before training, and gives
evaluation its fixed-randomness copy.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable

import torch
import torch.distributed as dist
from sentence_transformers import SentenceTransformerTrainer
from torch import nn
from transformers import TrainerCallback

from st_contrastive.checkpoints import MANIFEST_NAME, write_manifest
from st_contrastive.distributed import leave_process_group_at_exit

logger = logging.getLogger(__name__)

LOSS_STATE_NAME = "loss_state.pt"


class ContrastiveTrainer(SentenceTransformerTrainer):
    """Drop-in ``SentenceTransformerTrainer`` for losses that own parameters (every loss of this package)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        leave_process_group_at_exit()  # its arguments joined the launcher's processes (through accelerate)
        self.add_callback(_EpochToCollator(self))
        self.add_callback(_LossParametersFromRankZero(self))
        check_model = getattr(self.data_collator, "check_model", None)
        if check_model is not None:  # e.g. spans longer than the model takes: an error now, not mid-training
            check_model(self.model)

    time_budget = None  # a TimeBudget: the learning rate follows the clock instead of the steps

    def create_scheduler(self, num_training_steps: int, optimizer=None):
        if self.time_budget is None or self.lr_scheduler is not None:
            return super().create_scheduler(num_training_steps, optimizer)
        from torch.optim.lr_scheduler import LambdaLR

        self.lr_scheduler = LambdaLR(optimizer or self.optimizer, self.time_budget.factor)
        return self.lr_scheduler

    def get_eval_dataloader(self, eval_dataset=None):
        """Evaluation batches from the collator's evaluation copy, when it has one (fixed spans and masks)."""
        for_evaluation = getattr(self.data_collator, "for_evaluation", None)
        if for_evaluation is None:
            return super().get_eval_dataloader(eval_dataset)
        training_collator, self.data_collator = self.data_collator, for_evaluation()
        try:
            return super().get_eval_dataloader(eval_dataset)
        finally:
            self.data_collator = training_collator

    def named_losses(self) -> dict[str, nn.Module]:
        return self.loss if isinstance(self.loss, dict) else {"loss": self.loss}

    def loss_parameters(self) -> list[nn.Parameter]:
        """Parameters of the loss(es) that are not the model's (tied weights belong to the model)."""
        return loss_own_parameters(self.model, self.named_losses().values())

    def _model_keys(self, loss: nn.Module) -> set[str]:
        """Keys of ``loss.state_dict()`` holding the model's tensors (its encoder, weights tied to it)."""
        model_tensors = {id(t) for t in self.model.state_dict(keep_vars=True).values()}
        return {k for k, v in loss.state_dict(keep_vars=True).items() if id(v) in model_tensors}

    def loss_state_dict(self) -> dict[str, dict[str, torch.Tensor]]:
        """The loss-owned tensors of every loss, by loss name (``"loss"`` for a single loss)."""
        states = {}
        for name, loss in self.named_losses().items():
            skip = self._model_keys(loss)
            # Besides tensors, a loss may keep extra state (a random generator, counters) for exact resumes.
            states[name] = {
                k: v.detach().cpu() if isinstance(v, torch.Tensor) else v
                for k, v in loss.state_dict().items()
                if k not in skip
            }
        return states

    def load_loss_state(self, checkpoint_dir: str) -> None:
        path = os.path.join(checkpoint_dir, LOSS_STATE_NAME)
        if not os.path.exists(path):
            if self.loss_parameters():
                logger.warning(
                    "%s has no %s: the loss's own parameters start from scratch.", checkpoint_dir, LOSS_STATE_NAME
                )
            return
        state = torch.load(path, map_location="cpu", weights_only=True)
        for name, loss in self.named_losses().items():
            # strict=False: the model's own weights are not in the file, they come with the checkpoint itself.
            result = loss.load_state_dict(state.get(name, {}), strict=False)
            missing = sorted(set(result.missing_keys) - self._model_keys(loss))
            if missing or result.unexpected_keys:
                raise ValueError(
                    f"{path} does not match the loss {name!r}: missing {missing}, unexpected {result.unexpected_keys}"
                )

    # Saving and restoring -------------------------------------------------------------------------------
    def _save(self, output_dir: str | None = None, state_dict=None) -> None:
        # transformers 5 calls _save on every rank and checks should_save inside its own _save, which
        # sentence-transformers' override skips: without this, every DDP rank writes the same checkpoint files at once.
        if not self.args.should_save:
            return
        super()._save(output_dir, state_dict=state_dict)
        loss_state = self.loss_state_dict()
        if any(loss_state.values()):
            torch.save(loss_state, os.path.join(output_dir or self.args.output_dir, LOSS_STATE_NAME))

    def _save_checkpoint(self, model, trial) -> None:
        """transformers' checkpoint, then its manifest (files and sizes): a checkpoint without one, or whose files
        differ from it, was torn by a kill during the save and is never resumed from."""
        folder = os.path.join(self._get_output_dir(trial=trial), f"checkpoint-{self.state.global_step}")
        if self.args.should_save and os.path.exists(os.path.join(folder, MANIFEST_NAME)):
            os.remove(os.path.join(folder, MANIFEST_NAME))  # saved again at the same step: complete only once done
        super()._save_checkpoint(model, trial)
        if self.args.should_save and os.path.isdir(folder):
            write_manifest(folder)

    def _load_from_checkpoint(self, checkpoint_path: str, *args, **kwargs) -> None:
        super()._load_from_checkpoint(checkpoint_path, *args, **kwargs)
        self.load_loss_state(checkpoint_path)

    # No _load_best_model override: sentence-transformers loads the best model through _load_from_checkpoint, so the
    # loss state comes with it exactly once, and not at all when the model itself could not be loaded.

    # Clipping and distributed gradients ------------------------------------------------------------------
    def _clip_grad_norm(self, model):
        self._average_loss_gradients()
        return self.accelerator.clip_grad_norm_(
            optimized_parameters(model, self.named_losses().values()), self.args.max_grad_norm
        )

    def _get_grad_norm(self, model, grad_norm=None):
        if grad_norm is None:  # no clipping this run: still sync, and report the norm of everything trained
            self._average_loss_gradients()
            everything = optimized_parameters(model, self.named_losses().values())
            grad_norm = self.accelerator.clip_grad_norm_(everything, float("inf"))
        return super()._get_grad_norm(model, grad_norm=grad_norm)

    def _average_loss_gradients(self) -> None:
        """DDP averages the model's gradients only; average the loss's own so no rank drifts."""
        average_gradients_across_ranks(self.loss_parameters())


def loss_own_parameters(model: nn.Module, losses: Iterable[nn.Module]) -> list[nn.Parameter]:
    """Parameters of ``losses`` that are not ``model``'s, each once: a loss holds the model as ``self.model``, so
    its ``parameters()`` repeat the encoder's, and weights tied to the model belong to the model."""
    model_params = {id(p) for p in model.parameters()}
    seen, params = set(), []
    for loss in losses:
        for p in loss.parameters():
            if id(p) not in model_params and id(p) not in seen:
                seen.add(id(p))
                params.append(p)
    return params


def optimized_parameters(model: nn.Module, losses: Iterable[nn.Module]) -> list[nn.Parameter]:
    """What an optimizer built by hand should step: the model's parameters, then the losses' own, each exactly once
    (``[*model.parameters(), *loss.parameters()]`` lists the encoder twice, and AdamW would step it twice)."""
    return [*model.parameters(), *loss_own_parameters(model, losses)]


def average_gradients_across_ranks(params: list[nn.Parameter]) -> None:
    """All-reduce (mean) the gradients of ``params`` over the default process group, when there is one."""
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() < 2:
        return
    for p in params:
        # Every rank must join every all_reduce: a missing gradient counts as zeros.
        grad = p.grad if p.grad is not None else torch.zeros_like(p)
        dist.all_reduce(grad, op=dist.ReduceOp.SUM)
        p.grad = grad.div_(dist.get_world_size())


def broadcast_from_rank_zero(params: list[nn.Parameter]) -> None:
    """Copy rank 0's values of ``params`` to every rank (DDP does this for the model's parameters only)."""
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() < 2:
        return
    with torch.no_grad():
        for p in params:
            dist.broadcast(p.data, src=0)


class _LossParametersFromRankZero(TrainerCallback):
    """Loss-owned parameters start equal on every rank, however each rank initialised them (a head drawn with
    another seed); averaged gradients then keep them equal."""

    def __init__(self, trainer: ContrastiveTrainer) -> None:
        self.trainer = trainer

    def on_train_begin(self, args, state, control, **kwargs):
        broadcast_from_rank_zero(self.trainer.loss_parameters())


class _EpochToCollator(TrainerCallback):
    """Reseeds collators that sample (span sampling, masking) at every epoch."""

    def __init__(self, trainer: ContrastiveTrainer) -> None:
        self.trainer = trainer

    def on_epoch_begin(self, args, state, control, **kwargs):
        set_epoch = getattr(self.trainer.data_collator, "set_epoch", None)
        if set_epoch is not None:
            set_epoch(int(state.epoch or 0))
