"""Sentences cut from documents: the training data of unsupervised SimCSE, taken from the corpus DeCLUTR reads."""

from __future__ import annotations

import random

from datasets import Dataset

from st_contrastive.extras import require_extra


def split_into_sentences(
    documents: Dataset, limit: int, seed: int = 0, min_words: int = 4, text_field: str = "text"
) -> list[str]:
    """Up to ``limit`` sentences of at least ``min_words`` words, from documents visited in a seeded random order.

    Sentence boundaries come from spaCy's rule-based ``sentencizer`` (punctuation, no model to download). Whole
    documents are split until ``limit`` sentences are collected, then the sentences are shuffled, so that a batch
    mixes documents instead of holding consecutive sentences of one.
    """
    spacy = require_extra("spacy", "parsing")
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.max_length = max(nlp.max_length, max(len(text) for text in documents[text_field]) + 1)
    rng = random.Random(seed)
    order = list(range(len(documents)))
    rng.shuffle(order)
    sentences: list[str] = []
    texts = (documents[i][text_field] for i in order)
    for doc in nlp.pipe(texts, batch_size=16):
        sentences += [s.text.strip() for s in doc.sents if len(s.text.split()) >= min_words]
        if len(sentences) >= limit:
            break
    rng.shuffle(sentences)
    return sentences[:limit]
