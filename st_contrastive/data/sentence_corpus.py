"""A parsed corpus (``st-contrastive parse``'s output) as a dataset of consecutive sentences."""

from __future__ import annotations

import itertools
from pathlib import Path

from datasets import Dataset

from st_contrastive.parsing import ParsedSentence, read_parsed

# Positions of sentences of different documents differ by at least this much, so no context window (a few
# sentences) reaches across a document boundary.
DOCUMENT_STRIDE = 1_000_000


def document_of(sentence_id: str) -> str:
    """The document part of a parsed sentence id ``<document>:<paragraph>:<sentence>``; a sentence of a ``.txt``
    corpus (id: its line number) belongs to the one document the file is."""
    return sentence_id.rsplit(":", 2)[0] if ":" in sentence_id else ""


def load_sentence_corpus(path: str | Path, limit: int | None = None) -> tuple[Dataset, list[ParsedSentence]]:
    """The first ``limit`` sentences of a parsed corpus in reading order, as a dataset with a ``sentence`` column
    (``{"id": sentence id}``: each row reads its own parse, added with
    :meth:`~st_contrastive.models.ParsedTextInput.add_parses`, so sentences with equal texts, or without text as
    read from CoNLL-U, stay distinct) and a ``label`` column (the sentence's position: its index in its document
    plus ``DOCUMENT_STRIDE`` × the document's index), and their parses. Ids must be unique and not empty."""
    sentences = list(itertools.islice(read_parsed(path), limit))
    if len(sentences) < 2:
        raise ValueError(
            f"{path}: {len(sentences)} parsed sentence(s); a context objective needs consecutive sentences"
        )
    seen = set()
    for number, sentence in enumerate(sentences, start=1):
        if not sentence.id or sentence.id in seen:
            problem = "has no id" if not sentence.id else f"repeats the id {sentence.id!r}"
            raise ValueError(f"{path}: sentence {number} {problem}; each row is keyed to its parse by a unique id")
        seen.add(sentence.id)
    positions, document, index, within = [], None, -1, 0
    for sentence in sentences:
        if document_of(sentence.id) != document:
            document, index, within = document_of(sentence.id), index + 1, 0
        if within >= DOCUMENT_STRIDE:
            raise ValueError(f"{path}: document {document!r} has over {DOCUMENT_STRIDE} sentences; split it")
        positions.append(index * DOCUMENT_STRIDE + within)
        within += 1
    dataset = Dataset.from_dict({"sentence": [{"id": s.id} for s in sentences], "label": positions})
    return dataset, sentences
