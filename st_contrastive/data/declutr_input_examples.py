"""DeCLUTR for the legacy ``model.fit()``: documents expanded once into ``InputExample``s.

``fit()`` materialises its DataLoader once and ignores custom collators, so the spans sampled here are frozen
for every epoch (the trainer path samples new spans at every batch), the spans are decoded to text and
re-tokenized by the model, and anchors are masked inside the loss. ``fit()`` also uses the plain
``SentenceTransformerTrainer``, which does not save the MLM head. Prefer ``ContrastiveTrainer``.
"""

from __future__ import annotations

import numpy as np
from datasets import Dataset
from sentence_transformers.sentence_transformer.readers.input_example import InputExample

from st_contrastive.data.span_sampler import SpanSampler


def declutr_input_examples(
    documents: Dataset, tokenizer, span_sampler: SpanSampler, seed: int = 0
) -> list[InputExample]:
    """One ``InputExample(texts=[anchor, positive_1, …, positive_P])`` per anchor, from ``token_ids`` rows."""
    rng = np.random.default_rng(seed)
    examples = []
    for token_ids in documents["token_ids"]:
        for spans in span_sampler.sample(len(token_ids), rng):
            texts = [tokenizer.decode(token_ids[s.start : s.end]) for s in (spans.anchor, *spans.positives)]
            examples.append(InputExample(texts=texts))
    return examples
