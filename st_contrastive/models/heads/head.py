"""The base of the heads a loss trains on top of sentence embeddings (classifiers, later the bilinear scorer)."""

from __future__ import annotations

from st_contrastive.models.configured_module import ConfiguredModule


class Head(ConfiguredModule):
    """A sentence-transformers module that a loss owns and that is saved beside the encoder, not inside it.

    Heads follow ST's module conventions: ``config_keys`` name the constructor arguments written to
    ``config.json``, the weights go to ``model.safetensors``, and :meth:`load` takes a local folder or a Hub id.
    The encoder checkpoint stays a plain Transformer + Pooling model; :class:`~st_contrastive.training.
    ContrastiveTrainer` saves, restores, clips and DDP-syncs the head while the loss trains it.
    """
