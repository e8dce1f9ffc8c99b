"""The sequential view (SEQ): a bidirectional GRU over the words (Simoulin & Crabbé §2.2, Cho et al., 2014)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

from st_contrastive.arguments import at_least
from st_contrastive.models.multiview.word_embeddings import WordEmbeddings


class GRUEncoder(nn.Module):
    """Words → bidirectional GRU; the sentence is the concatenation of the last forward and the last backward
    hidden states (``dim`` = 2 × the hidden size of one direction)."""

    def __init__(self, num_words: int, word_dim: int, dim: int, frozen_embeddings: bool = False) -> None:
        super().__init__()
        for argument, size in (("num_words", num_words), ("word_dim", word_dim), ("dim", dim)):
            at_least(argument, size, 1)
        if dim % 2:
            raise ValueError(f"the SEQ view concatenates two directions: its dim must be even, not {dim}")
        self.embeddings = WordEmbeddings(num_words, word_dim, frozen=frozen_embeddings)
        self.gru = nn.GRU(word_dim, dim // 2, batch_first=True, bidirectional=True)

    def forward(self, features: dict[str, torch.Tensor]) -> torch.Tensor:
        words = self.embeddings(features["input_ids"])
        # Packed: the backward direction starts at each sentence's last word, not at the padding. The lengths are
        # the host's list from the input module (packing reads them on the host; from the mask, a wait for the GPU).
        packed = pack_padded_sequence(
            words, torch.as_tensor(features["lengths"]), batch_first=True, enforce_sorted=False
        )
        _, last = self.gru(packed)  # (2, batch, dim/2): last forward state, last backward state
        return torch.cat([last[0], last[1]], dim=-1)
