"""The base of the heads a loss trains on top of sentence embeddings (classifiers, later the bilinear scorer)."""

from __future__ import annotations

import torch

from st_contrastive.models.configured_module import ConfiguredModule


class Head(ConfiguredModule):
    """A sentence-transformers module that a loss owns and that is saved beside the encoder, not inside it.

    Heads follow ST's module conventions: ``config_keys`` name the constructor arguments written to
    ``config.json``, the weights go to ``model.safetensors``, and :meth:`load` takes a local folder or a Hub id.
    The encoder checkpoint stays a plain Transformer + Pooling model; :class:`~st_contrastive.training.
    ContrastiveTrainer` saves, restores, clips and DDP-syncs the head while the loss trains it.
    """

    def check_label_ids(self, label_ids: torch.Tensor) -> None:
        """A ValueError naming the first batch row whose label id is not one of this head's ``labels``.

        A loss calls it before its encoder runs: on a GPU, reading the check's result then waits only for the
        batch's copy to the device, not for the forward pass (checked after it, every step would stall)."""
        outside = (label_ids < 0) | (label_ids >= len(self.labels))
        if outside.any():
            bad = int(outside.nonzero()[0])
            raise ValueError(f"batch row {bad} has label {int(label_ids[bad])}; expected 0..{len(self.labels) - 1}")
