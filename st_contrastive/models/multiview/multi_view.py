"""Two structured views of a sentence, one embedding: ``[f(s); g(s)]`` (Simoulin & Crabbé, 2021, Fig. 2)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import ClassVar

import numpy as np
import torch
from torch import nn

from st_contrastive.arguments import at_least
from st_contrastive.models.configured_module import ConfiguredModule
from st_contrastive.models.multiview.binary_tree_lstm import BinaryTreeLSTM
from st_contrastive.models.multiview.child_sum_tree_lstm import ChildSumTreeLSTM
from st_contrastive.models.multiview.gru_encoder import GRUEncoder
from st_contrastive.models.multiview.parsed_text_input import ParsedTextInput
from st_contrastive.models.multiview.vocabulary import Vocabulary
from st_contrastive.models.multiview.word_embeddings import WordEmbeddings, vocabulary_from_vectors
from st_contrastive.parsing import ParsedSentence

VIEW_ENCODERS = {"seq": GRUEncoder, "dep": ChildSumTreeLSTM, "const": BinaryTreeLSTM}


class MultiView(ConfiguredModule):
    """Runs two view encoders f and g over the features of :class:`~st_contrastive.models.ParsedTextInput`.

    ``sentence_embedding`` is ``[f(s); g(s)]`` (``2 × dim``); ``view_embeddings`` is ``(f(s), g(s))`` for
    :class:`~st_contrastive.losses.MultiViewBilinearLoss`. Views: ``"seq"`` (bi-GRU), ``"dep"`` (attentive
    child-sum Tree-LSTM), ``"const"`` (binary Tree-LSTM); the same view twice is the single-view control
    (QuickThought's SEQ, SEQ). Each view has its own word embeddings. Weights start Xavier-uniform and biases at
    zero (the paper's appendix A.2).
    """

    config_keys: ClassVar[list[str]] = ["views", "num_words", "word_dim", "dim", "frozen_embeddings", "attention"]

    def __init__(
        self,
        views: list[str],
        num_words: int,
        word_dim: int = 300,
        dim: int = 600,
        frozen_embeddings: bool = False,
        attention: bool = True,
    ) -> None:
        super().__init__()
        for argument, size in (("num_words", num_words), ("word_dim", word_dim), ("dim", dim)):
            at_least(argument, size, 1)
        views = [v.lower() for v in views]
        if len(views) != 2 or any(v not in VIEW_ENCODERS for v in views):
            raise ValueError(f"views: two of {sorted(VIEW_ENCODERS)} (the same one twice is allowed), not {views}")
        self.views, self.num_words, self.word_dim, self.dim = views, num_words, word_dim, dim
        self.frozen_embeddings, self.attention = frozen_embeddings, attention
        self.f, self.g = (self._encoder(view) for view in views)
        self.reset_parameters()

    def _encoder(self, view: str) -> nn.Module:
        extra = {"attention": self.attention} if view == "dep" else {}
        return VIEW_ENCODERS[view](self.num_words, self.word_dim, self.dim, self.frozen_embeddings, **extra)

    def reset_parameters(self) -> None:
        """Xavier-uniform weights, zero biases, a zero padding row (A.2: "initialized with a Xavier distribution
        and biases set to 0")."""
        for name, parameter in self.named_parameters():
            with torch.no_grad():
                if parameter.dim() >= 2:
                    nn.init.xavier_uniform_(parameter)
                else:
                    parameter.zero_()
                if name.endswith("embeddings.embedding.weight"):
                    parameter[0] = 0.0

    def set_word_vectors(self, vectors: torch.Tensor) -> None:
        """Both views' embeddings from pre-trained vectors, one row per vocabulary id (frozen if configured)."""
        for encoder in (self.f, self.g):
            encoder.embeddings.embedding.weight.data.copy_(vectors)

    def forward(self, features: dict[str, torch.Tensor], **kwargs) -> dict[str, torch.Tensor]:
        f, g = self.f(features), self.g(features)
        features["view_embeddings"] = (f, g)
        features["sentence_embedding"] = torch.cat([f, g], dim=-1)
        return features

    def get_embedding_dimension(self) -> int:
        return 2 * self.dim


def multiview_model(
    views: list[str],
    sentences: Iterable[ParsedSentence],
    parser: str | None = "spacy",
    word_dim: int = 300,
    dim: int = 600,
    attention: bool = True,
    max_words: int = 50_000,
    word_vectors: tuple[list[str], np.ndarray] | None = None,
    device: str | None = None,
):
    """A ``SentenceTransformer`` of :class:`ParsedTextInput` + :class:`MultiView`, Xavier-initialised.

    The vocabulary is the ``max_words`` most frequent tokens of ``sentences`` (the paper: 50K, trained), or with
    ``word_vectors`` (``(words, vectors)`` from :func:`~st_contrastive.models.load_word_vectors`) ``max_words`` of
    the vectors' words, frozen (the paper's GloVe configuration; ``word_dim`` becomes theirs): those that
    ``sentences`` use, most used first, then the others in the vectors' order (see :func:`vocabulary_from_vectors`).
    """
    from sentence_transformers import SentenceTransformer

    if word_vectors is None:
        vocabulary = Vocabulary.build((s.tokens for s in sentences), max_size=max_words)
        views_module = MultiView(views, len(vocabulary), word_dim, dim, frozen_embeddings=False, attention=attention)
    else:
        words, vectors = word_vectors
        # spaCy's tables have no frequency order: the corpus's own counts keep its words (and "the") in.
        counts = Counter(token for s in sentences for token in s.tokens)
        vocabulary = vocabulary_from_vectors(words, max_words, token_counts=counts)
        table = WordEmbeddings.from_vectors(vocabulary, words, vectors, frozen=True)[0].embedding.weight.detach()
        views_module = MultiView(
            views, len(vocabulary), table.shape[1], dim, frozen_embeddings=True, attention=attention
        )
        views_module.set_word_vectors(table)
    return SentenceTransformer(modules=[ParsedTextInput(vocabulary, parser), views_module], device=device or "cpu")
