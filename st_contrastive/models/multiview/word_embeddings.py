"""Word embeddings of the structured view encoders: trained from Xavier init, or frozen pre-trained vectors.

Simoulin & Crabbé (section 3.2) train each configuration twice: a 50K-word corpus vocabulary, Xavier-initialised
and updated during training; and frozen pre-trained GloVe vectors, with the vectors' own words as vocabulary.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy
import torch
from torch import nn

from st_contrastive.arguments import at_least
from st_contrastive.models.multiview.vocabulary import PAD, UNK, Vocabulary


class WordEmbeddings(nn.Module):
    """An ``nn.Embedding`` with ``padding_idx=0``: Xavier-uniform rows (the paper initialises all weights with a
    Xavier distribution), the ``[PAD]`` row zero and without gradient; ``frozen`` turns off the gradient of the
    whole weight."""

    def __init__(self, num_words: int, dim: int, frozen: bool = False) -> None:
        super().__init__()
        at_least("num_words", num_words, 1)
        at_least("dim", dim, 1)
        self.embedding = nn.Embedding(num_words, dim, padding_idx=0)
        with torch.no_grad():
            nn.init.xavier_uniform_(self.embedding.weight)
            self.embedding.weight[0].zero_()
        self.embedding.weight.requires_grad_(not frozen)

    @property
    def frozen(self) -> bool:
        return not self.embedding.weight.requires_grad

    @classmethod
    def from_vectors(
        cls, vocabulary: Vocabulary, words: Sequence[str], vectors: numpy.ndarray | torch.Tensor, frozen: bool = True
    ) -> tuple[WordEmbeddings, int]:
        """Embeddings for ``vocabulary`` whose rows are copied from pre-trained ``vectors`` (one row per entry of
        ``words``, e.g. from :func:`~st_contrastive.models.multiview.word_vectors.load_word_vectors`).

        A vocabulary word takes the vector of the same word, else of its lowercased form; a word found neither way
        (and ``[UNK]``) keeps its Xavier init, ``[PAD]`` stays zero. Returns the module and the number of
        vocabulary words that got a pre-trained vector.
        """
        vectors = torch.as_tensor(vectors, dtype=torch.float32)
        if vectors.ndim != 2 or len(vectors) != len(words):
            raise ValueError(f"{len(words)} words but vectors of shape {tuple(vectors.shape)}: one row per word")
        row_of: dict[str, int] = {}
        for row, word in enumerate(words):
            row_of.setdefault(word, row)  # a repeated word: its first (most frequent) vector
        module = cls(len(vocabulary), vectors.shape[1], frozen=frozen)
        ids, rows = [], []
        for index, word in enumerate(vocabulary.words):
            if word in (PAD, UNK):
                continue
            row = row_of.get(word, row_of.get(word.lower()))
            if row is not None:
                ids.append(index)
                rows.append(row)
        ids_t, rows_t = torch.tensor(ids, dtype=torch.long), torch.tensor(rows, dtype=torch.long)  # [] stays long
        with torch.no_grad():
            module.embedding.weight[ids_t] = vectors[rows_t]
        return module, len(ids)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """``ids`` of any shape → embeddings of shape ``ids.shape + (dim,)``."""
        return self.embedding(ids)


def vocabulary_from_vectors(
    words: Sequence[str], max_size: int | None = None, token_counts: Mapping[str, int] | None = None
) -> Vocabulary:
    """The frozen configuration's vocabulary: ``max_size`` of the vectors' own distinct words, after ``[PAD]`` and
    ``[UNK]``; a repeated word or one spelled like a special is not added again.

    With ``token_counts`` (a corpus's tokens and their counts) the words the corpus uses come first, most used
    first (a token counts for the word :meth:`Vocabulary.lookup` would find: itself, else its lowercased form),
    then the other words in the vectors' order. Without them the vectors' order alone decides, which is frequency
    order for GloVe/word2vec files but arbitrary for a spaCy table (en_core_web_md starts with '1-800-398-3128'),
    so a spaCy vocabulary cut to ``max_size`` needs the counts to keep "the".
    """
    kept = [word for word in dict.fromkeys(words) if word not in (PAD, UNK)]
    if token_counts:
        present = set(kept)
        uses: Counter[str] = Counter()
        for token, count in token_counts.items():
            word = token if token in present else token.lower()
            if word in present:
                uses[word] += count
        kept.sort(key=lambda word: -uses[word])  # stable: ties (unused words) keep the vectors' order
    return Vocabulary(kept[:max_size])
