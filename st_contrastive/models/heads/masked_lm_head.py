"""The masked-language-model head of an encoder, run on token embeddings the encoder already computed (its inputs
are masked by :func:`st_contrastive.models.masking.mask_tokens`)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

import torch
from torch import nn
from torch.nn import functional as F
from transformers import AutoModelForMaskedLM
from transformers.modeling_outputs import BaseModelOutput
from transformers.utils import logging as transformers_logging

from st_contrastive.models.masking import IGNORE_INDEX

logger = logging.getLogger(__name__)


class _GivenHiddenStates(nn.Module):
    """Stands in for the encoder inside a ``*ForMaskedLM`` model: returns the hidden states it is given."""

    def forward(self, *args, inputs_embeds=None, **kwargs) -> BaseModelOutput:
        return BaseModelOutput(last_hidden_state=inputs_embeds)


class MaskedLMHead(nn.Module):
    """The prediction head of ``AutoModelForMaskedLM`` for the encoder ``encoder`` (a transformers model).

    The head is taken from the checkpoint at ``encoder.name_or_path`` when it has one; otherwise it starts new
    (e.g. all-MiniLM-L6-v2 ships no MLM head). When the config ties word embeddings, the decoder shares the
    encoder's input embedding matrix, so a new head still predicts tokens from the pretrained embeddings.
    Working on given token embeddings, the head costs no second encoder pass; it only scores masked positions.
    """

    def __init__(self, encoder: nn.Module) -> None:
        super().__init__()
        config = encoder.config
        source = config.name_or_path or getattr(encoder, "name_or_path", "")
        verbosity = transformers_logging.get_verbosity()
        transformers_logging.set_verbosity_error()  # its load report would list every new head weight as MISSING
        try:
            masked_lm, info = AutoModelForMaskedLM.from_pretrained(source, output_loading_info=True)
            base_prefix = masked_lm.base_model_prefix
            new_head = [k for k in info["missing_keys"] if not k.startswith(base_prefix + ".")]
            self.pretrained = not new_head
        except (OSError, ValueError):  # no loadable checkpoint: build the head from the config alone
            masked_lm, self.pretrained = AutoModelForMaskedLM.from_config(config), False
        finally:
            transformers_logging.set_verbosity(verbosity)
        if not self.pretrained:
            logger.warning(
                "%s has no MLM head: a new one was initialised (its decoder tied to the input embeddings), "
                "so the MLM loss starts near ln(vocabulary size).",
                source or type(encoder).__name__,
            )
        setattr(masked_lm, masked_lm.base_model_prefix, _GivenHiddenStates())
        # Loaded or built on the CPU in float32: the head sits where the encoder is (a model on a GPU, in bf16).
        self.masked_lm = masked_lm.to(device=encoder.device, dtype=encoder.dtype)
        self.tied = bool(getattr(config, "tie_word_embeddings", True))
        if self.tied:
            self.masked_lm.get_output_embeddings().weight = encoder.get_input_embeddings().weight
            # A step that reads no masked token gives the embeddings only their lookup's (sparse) gradient, which
            # the optimiser cannot take: made dense then, as it always was (see sparse_lookup_gradient).
            weight = encoder.get_input_embeddings().weight
            if not getattr(weight, "_densified", False):  # once per weight, however many heads share it
                weight.register_hook(lambda grad: grad.to_dense() if grad.is_sparse else grad)
                weight._densified = True
        self._input_embeddings = encoder.get_input_embeddings() if self.tied else None
        if self.tied:  # the decoder's weight by its name in the head, for masked_loss's decoder_weight
            decoder = self.masked_lm.get_output_embeddings().weight
            self._decoder_name = next(n for n, p in self.masked_lm.named_parameters() if p is decoder)

    @contextlib.contextmanager
    def sparse_lookup_gradient(self) -> Iterator[torch.Tensor | None]:
        """While the encoder embeds a batch whose MLM loss this head computes, its embedding lookup's gradient is
        sparse (the rows of the batch's tokens), and the tied decoder's gradient, dense over the whole vocabulary,
        takes those rows in: the step fills and adds no second dense vocabulary-by-dimension matrix (the same
        update). Yields the ``decoder_weight`` to give :meth:`masked_loss` (None when the head is not tied)."""
        embeddings = self._input_embeddings
        if embeddings is None or embeddings.sparse:
            yield None
            return
        # An alias of the tied matrix made before any lookup, for the decoder to read. autograd runs, of the nodes
        # ready, the one made last first, so the alias's (which passes the decoder's dense gradient on) comes after
        # every lookup's: their sparse gradients are summed first and added to the dense one once. Without it the
        # dense gradient arrives first and each lookup's rows are added to it out of place, a copy of the whole
        # matrix per encoder call (the length groups make several).
        decoder_weight = embeddings.weight.view_as(embeddings.weight)
        embeddings.sparse = True
        try:
            yield decoder_weight
        finally:
            embeddings.sparse = False

    def forward(self, token_embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy over the positions whose label is not -100."""
        # The vocabulary projection runs on the masked positions alone (about 15 %); finding them waits for the GPU
        # (their count sets the shape), so a loss that knows them beforehand calls masked_loss.
        chosen = (labels != IGNORE_INDEX).nonzero(as_tuple=True)
        return self.masked_loss(token_embeddings[chosen], labels[chosen])

    def masked_loss(
        self, masked_embeddings: torch.Tensor, labels: torch.Tensor, decoder_weight: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Mean cross-entropy of the masked positions' token embeddings ``(masked, dim)`` against their labels; no
        read of any value on the host. A batch that masks nothing gives 0, in the graph. ``decoder_weight``: what
        :meth:`sparse_lookup_gradient` yielded, read by the decoder in place of the tied matrix (the same values)."""
        inputs = {"inputs_embeds": masked_embeddings.unsqueeze(0)}
        if decoder_weight is None:
            logits = self.masked_lm(**inputs).logits[0]
        else:
            replaced = {self._decoder_name: decoder_weight}
            logits = torch.func.functional_call(self.masked_lm, replaced, kwargs=inputs).logits[0]
        return F.cross_entropy(logits, labels, reduction="sum") / max(len(logits), 1)

    def save_masked_lm(self, encoder: nn.Module, tokenizer, path: str) -> None:
        """Write ``encoder`` with this head as a ``*ForMaskedLM`` checkpoint, so MLM training can go on later."""
        prefix = self.masked_lm.base_model_prefix
        setattr(self.masked_lm, prefix, encoder)
        try:
            self.masked_lm.save_pretrained(path)
        finally:
            setattr(self.masked_lm, prefix, _GivenHiddenStates())
        if tokenizer is not None:
            tokenizer.save_pretrained(path)
