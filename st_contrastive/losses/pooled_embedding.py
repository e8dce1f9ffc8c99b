"""The pooled embedding before a model's final ``Normalize``, for the losses whose softmax head reads embeddings.

A sentence encoder such as all-MiniLM-L6-v2 ends in ``Normalize``. A softmax head over unit-norm (u, v, |u−v|)
features starts with logits near zero and little to fit, so cross-entropy reshapes the whole embedding space to
make room. Inside :func:`before_final_normalize` the model's last ``Normalize`` hands on its input unchanged, so the
head (and the contrastive term beside it) read the pooled, unnormalised embedding; outside it, the model is what it
was, and the checkpoint it saves encodes unit vectors as before training. Hooks, not a copy of the model without the
module: the trainer wraps the model the loss holds (DDP), and the encoder must run through that wrapper.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sentence_transformers.sentence_transformer.modules import Normalize


def final_normalize(model) -> Normalize | None:
    """The model's last module when it is a ``Normalize`` (through a DDP wrapper), else None."""
    model = getattr(model, "module", model)
    modules = list(model) if hasattr(model, "__iter__") else []
    return modules[-1] if modules and isinstance(modules[-1], Normalize) else None


@contextmanager
def before_final_normalize(model) -> Iterator[None]:
    """While inside, ``model(features)["sentence_embedding"]`` is the embedding its final ``Normalize`` received."""
    normalize = final_normalize(model)
    if normalize is None:
        yield
        return
    received = []

    def keep(module, args):
        received.append(args[0].get(module.module_input_name))

    def restore(module, args, features):
        unnormalised = received.pop()
        if unnormalised is not None:
            features[module.module_output_name] = unnormalised
        return features

    handles = [normalize.register_forward_pre_hook(keep), normalize.register_forward_hook(restore)]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()
