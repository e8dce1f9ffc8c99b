"""Child-sum Tree-LSTM (Tai et al., 2015) over dependency trees, with the paper's attentive child sum (DEP view)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from st_contrastive.models.multiview.tree_batch import TreeBatch
from st_contrastive.models.multiview.word_embeddings import WordEmbeddings


class ChildSumTreeLSTMCell(nn.Module):
    """Tai et al.'s child-sum cell, computed one tree height at a time over a whole :class:`TreeBatch`.

    Node j with input x_j and children C(j): h̃_j = Σ_k h_k (with ``attention``: Σ_k α_kj h_k, α = softmax over the
    children of cos(W_q x_j + b_q, W_p h_k + b_p), Simoulin & Crabbé eqs. 1–4); i, o, u from x_j and h̃_j; one
    forget gate per child from x_j and h_k; c_j = i ⊙ u + Σ_k f_jk ⊙ c_k; h_j = o ⊙ tanh(c_j).
    """

    def __init__(self, input_size: int, hidden_size: int, attention: bool = False) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.attention = input_size, hidden_size, attention
        self.input_gates = nn.Linear(input_size, 4 * hidden_size)  # i, o, u, f from x (with the biases)
        self.hidden_iou = nn.Linear(hidden_size, 3 * hidden_size, bias=False)
        self.hidden_f = nn.Linear(hidden_size, hidden_size, bias=False)
        if attention:
            self.query = nn.Linear(input_size, hidden_size)
            self.key = nn.Linear(hidden_size, hidden_size)

    def forward(self, inputs: torch.Tensor, batch: TreeBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """``inputs``: one row per node. Returns ``(h, c)`` of every node, ``(num_nodes, hidden_size)``."""
        H = self.hidden_size
        gates_x = self.input_gates(inputs)
        queries = self.query(inputs) if self.attention else None
        h = inputs.new_zeros(batch.num_nodes, H)
        c = inputs.new_zeros(batch.num_nodes, H)
        for height, level in enumerate(batch.levels):
            n = len(level.nodes)
            x_part = gates_x[level.nodes]
            if height == 0:  # the leaves (height 0 holds exactly them): no children, no hidden products
                i, o, u = x_part[:, : 3 * H].chunk(3, dim=-1)
                cell = torch.sigmoid(i) * torch.tanh(u)
                h.index_copy_(0, level.nodes, torch.sigmoid(o) * torch.tanh(cell))
                c.index_copy_(0, level.nodes, cell)
                continue
            child_h, child_c = h[level.edge_child], c[level.edge_child]
            parent = level.edge_parent_position
            if self.attention and len(parent):
                scores = F.cosine_similarity(queries[level.nodes][parent], self.key(child_h), dim=-1)
                weights = scores.exp()  # cosine is in [-1, 1]: no overflow, no max to subtract
                weights = weights / weights.new_zeros(n).index_add(0, parent, weights)[parent]
                child_h_weighted = weights[:, None] * child_h
            else:
                child_h_weighted = child_h
            h_tilde = child_h.new_zeros(n, H).index_add(0, parent, child_h_weighted)
            i, o, u = (x_part[:, : 3 * H] + self.hidden_iou(h_tilde)).chunk(3, dim=-1)
            forget = torch.sigmoid(x_part[parent, 3 * H :] + self.hidden_f(child_h))
            cell = torch.sigmoid(i) * torch.tanh(u) + child_c.new_zeros(n, H).index_add(0, parent, forget * child_c)
            hidden = torch.sigmoid(o) * torch.tanh(cell)
            h.index_copy_(0, level.nodes, hidden)
            c.index_copy_(0, level.nodes, cell)
        return h, c


class ChildSumTreeLSTM(nn.Module):
    """The dependency view (DEP): words → child-sum Tree-LSTM over each sentence's dependency tree; the root's
    hidden state is the sentence embedding. ``attention=True`` (the paper's choice) weights the children."""

    def __init__(self, num_words: int, word_dim: int, dim: int, frozen_embeddings: bool = False,
                 attention: bool = True) -> None:
        super().__init__()
        self.embeddings = WordEmbeddings(num_words, word_dim, frozen=frozen_embeddings)
        self.cell = ChildSumTreeLSTMCell(word_dim, dim, attention=attention)

    def forward(self, features: dict[str, torch.Tensor]) -> torch.Tensor:
        mask = features["attention_mask"].bool()
        lengths = mask.sum(dim=1).tolist()
        heads = [row[:n] for row, n in zip(features["heads"].tolist(), lengths)]
        batch = TreeBatch.from_heads(heads).to(mask.device)
        words = self.embeddings(features["input_ids"])[mask]  # one row per token, sentence by sentence
        hidden, _ = self.cell(words, batch)
        return hidden[batch.roots]
