"""A plain transformers checkpoint (a ``*ForMaskedLM`` folder, or an original DeCLUTR release such as
``johngiorgi/declutr-small``) as a sentence-transformers model: its encoder with mean pooling."""

from __future__ import annotations

from sentence_transformers import SentenceTransformer
from sentence_transformers.sentence_transformer.modules import Pooling, Transformer


def mean_pooled_encoder(source: str, max_seq_length: int | None = None) -> SentenceTransformer:
    """``source``'s encoder (its MLM head dropped) followed by mean pooling over the last layer, DeCLUTR's and
    SBERT's embedding; saved, it loads with vanilla ``SentenceTransformer(path)``. ``max_seq_length`` defaults to
    the tokenizer's limit."""
    transformer = Transformer(source, max_seq_length=max_seq_length)
    pooling = Pooling(transformer.get_embedding_dimension(), pooling_mode="mean")
    return SentenceTransformer(modules=[transformer, pooling])
