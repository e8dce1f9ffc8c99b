"""A loss's named terms as one value that sentence-transformers' loss modifiers can weight and add, and how a loss
knows that a modifier is calling it on a reduced embedding.

sentence-transformers' trainer logs each term of a loss that returns a dict and back-propagates their sum. Its loss
modifiers (``MatryoshkaLoss``, ``Matryoshka2dLoss``, ``AdaptiveLayerLoss``) call the wrapped loss once per
dimension or layer and combine the results as tensors (``loss += weight * self.loss(...)``), which a plain dict
does not support. :class:`LossComponents` is that dict with the arithmetic: a weight scales every term, two
results add term by term, so a modified loss still returns (and the trainer still logs) ``contrastive``, ``mlm``,
``supcon`` and ``cross_entropy``, each summed over the modifier's calls.
"""

from __future__ import annotations

import numbers

import torch

# A tensor a modifier adds of its own (AdaptiveLayerLoss's KL term between layers) is logged under this name.
MODIFIER_TERM = "modifier"


class LossComponents(dict):
    """``{name: scalar tensor}`` that scales and adds as the sum of its terms would: ``w * c`` and ``c / w`` scale
    every term, ``c + d`` adds two results term by term, ``0 + c`` is ``c``, and ``c + t`` for a tensor ``t``
    adds ``t`` as the :data:`MODIFIER_TERM` term."""

    def __mul__(self, weight):
        if not isinstance(weight, numbers.Number | torch.Tensor):
            return NotImplemented
        return LossComponents({name: value * weight for name, value in self.items()})

    __rmul__ = __mul__

    def __truediv__(self, divisor):
        if not isinstance(divisor, numbers.Number | torch.Tensor):
            return NotImplemented
        return LossComponents({name: value / divisor for name, value in self.items()})

    def __add__(self, other):
        if isinstance(other, dict):
            return LossComponents(
                {
                    name: self[name] + other[name]
                    if name in self and name in other
                    else self.get(name, other.get(name))
                    for name in {**self, **other}
                }
            )
        if isinstance(other, numbers.Number) and other == 0:  # `loss = 0.0; loss += weight * ...`
            return LossComponents(self)
        if isinstance(other, torch.Tensor):
            return self + LossComponents({MODIFIER_TERM: other})
        return NotImplemented

    __radd__ = __add__

    def total(self) -> torch.Tensor:
        """The sum of the terms: what the trainer back-propagates."""
        return torch.stack(list(self.values())).sum()


def _encoder_forward(model):
    """The encoder's forward, which AdaptiveLayerLoss (and Matryoshka2dLoss) replaces with a decorator that has a
    ``layer_idx``: None at the last layer, the layer's index at an earlier one."""
    module = getattr(model, "module", model)  # under DDP the trainer hands the loss the wrapper
    return getattr(module[0], "forward", None)


def under_a_layer_modifier(model) -> bool:
    """Whether ``AdaptiveLayerLoss`` (or ``Matryoshka2dLoss``, built on it) is running."""
    return hasattr(_encoder_forward(model), "layer_idx")


def at_an_earlier_layer(model) -> bool:
    """Whether a layer modifier is calling the loss on embeddings pooled from an earlier layer."""
    return getattr(_encoder_forward(model), "layer_idx", None) is not None


def reduced_by_a_modifier(model, embeddings: torch.Tensor) -> bool:
    """Whether a loss modifier is calling the loss on a reduced form of the embedding: truncated to fewer dimensions
    (``MatryoshkaLoss``) or pooled from an earlier layer (``AdaptiveLayerLoss``). Terms that do not depend on the
    sentence embedding (DeCLUTR's MLM), and heads trained for the full embedding, are then left out, so that each is
    counted once per step, at full size."""
    full = model.get_embedding_dimension()
    return (full is not None and embeddings.shape[-1] < full) or at_an_earlier_layer(model)


def same_for_every_layer(loss, batch: list, make):
    """``make()``, the inputs a loss hands its model for ``batch`` (copies without its own columns, one per dropout
    view), made once per batch while a layer modifier runs, and made anew at every call otherwise.

    ``AdaptiveLayerLoss`` runs the model once, which leaves each layer's output in the feature dicts the model
    received, then calls the loss again per earlier layer and reads those dicts back. A loss that gives the model
    copies (to take out MLM labels or premise groups, or to run a dict once per dropout rate) must give it the same
    copies at each of those calls; the batch's own dicts, compared by identity, say when a new step begins. Only the
    last batch is kept."""
    if not under_a_layer_modifier(loss.model):
        loss.__dict__.pop("_layer_inputs", None)
        return make()
    kept = loss.__dict__.get("_layer_inputs")
    if kept is None or len(kept[0]) != len(batch) or any(a is not b for a, b in zip(kept[0], batch)):
        kept = loss.__dict__["_layer_inputs"] = (list(batch), make())
    return kept[1]


def once_per_batch(loss, batch: list, make):
    """``make()`` once per batch, whatever modifier calls the loss: :func:`same_for_every_layer`'s copies, and
    also what a loss reads from the batch on the host (DeCLUTR's span lengths and masked positions), which
    ``MatryoshkaLoss``, calling the loss again per size after the encoder ran, would otherwise read again and make a
    GPU wait each time. The batch's own dicts, compared by identity, and the model's mode say when a new step
    begins; only the last batch is kept."""
    key = (list(batch), loss.model.training)
    kept = loss.__dict__.get("_batch_inputs")
    if (
        kept is None
        or kept[0][1] != key[1]
        or len(kept[0][0]) != len(batch)
        or any(a is not b for a, b in zip(kept[0][0], batch))
    ):
        kept = loss.__dict__["_batch_inputs"] = (key, make())
    return kept[1]


def refuse_layer_modifiers(loss) -> None:
    """``AdaptiveLayerLoss`` (and ``Matryoshka2dLoss``) calls the loss once per layer and back-propagates their sum;
    a cached loss back-propagates mini-batch by mini-batch from a hook of its own, which those calls cannot follow
    (sentence-transformers' own cached losses are not compatible with them either). Refused in one line instead of
    failing inside them; MatryoshkaLoss works with the cached losses."""
    if under_a_layer_modifier(loss.model):
        raise ValueError(
            f"{type(loss).__name__} does not work inside AdaptiveLayerLoss or Matryoshka2dLoss (it "
            "back-propagates mini-batch by mini-batch, which those modifiers cannot follow, like "
            "sentence-transformers' cached losses); use MatryoshkaLoss, or the loss without its cache"
        )
