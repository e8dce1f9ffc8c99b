"""Run an encoder with every dropout module at a chosen rate: SCALe's dropout views."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from torch import nn

from st_contrastive.arguments import fraction


@contextmanager
def dropout_rate(module: nn.Module, rate: float) -> Iterator[None]:
    """Set ``p`` of every ``nn.Dropout`` inside ``module`` to ``rate``, and restore each one's own on exit, also when
    an exception is raised. BERT-family attention reads its rate from the same modules (``self.dropout.p``)."""
    fraction("rate", rate, one_included=False)
    layers = [layer for layer in module.modules() if isinstance(layer, nn.Dropout)]
    saved = [layer.p for layer in layers]
    try:
        for layer in layers:
            layer.p = rate
        yield
    finally:
        for layer, p in zip(layers, saved):
            layer.p = p
