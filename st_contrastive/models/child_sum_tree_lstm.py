"""Child-sum Tree-LSTM (Tai et al., 2015) over dependency trees, with the paper's attentive child sum (DEP view)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from st_contrastive.models.tree_batch import TreeBatch


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
        for level in batch.levels:
            n = len(level.nodes)
            x_part = gates_x[level.nodes]
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
            h = h.index_copy(0, level.nodes, hidden)  # out of place: autograd keeps every level
            c = c.index_copy(0, level.nodes, cell)
        return h, c
