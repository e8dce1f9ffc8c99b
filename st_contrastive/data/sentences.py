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


def training_sentences(config, batch_size: int) -> list[str]:
    """The sentences a sentence-level baseline (SimCSE, TSDAE, CT) trains on, cut from ``config.dataset`` (its
    first ``config.max_rows`` documents): as many as its steps need, at most ``config.max_sentences``. Refused in one
    line when they do not make one batch."""
    from st_contrastive.data import load_corpus

    steps = config.training.max_steps
    needed = min(config.max_sentences, steps * batch_size) if steps > 0 else config.max_sentences
    documents = load_corpus(config.dataset, config.text_field, limit=config.max_rows)
    sentences = split_into_sentences(documents, needed, seed=config.training.seed, text_field="text")
    if len(sentences) < batch_size:
        raise ValueError(
            f"dataset={config.dataset!r} gave {len(sentences)} sentences, fewer than one batch "
            f"(batch_size={batch_size}): pass more documents or a smaller batch"
        )
    return sentences
