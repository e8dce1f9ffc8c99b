"""Binary (N-ary, N=2) Tree-LSTM (Tai et al., 2015) over binarized constituency trees (CONST view)."""

from __future__ import annotations

import torch
from torch import nn

from st_contrastive.models.tree_batch import TreeBatch


class BinaryTreeLSTMCell(nn.Module):
    """Tai et al.'s N-ary cell with N=2, one tree height at a time over a whole :class:`TreeBatch`.

    Separate parameters for the left and the right child: every gate g ∈ {i, f_L, f_R, o, u} is
    W_g x + U_g^L h_L + U_g^R h_R + b_g, so each child's forget gate sees both children (Tai's U^{(f)}_{kl}).
    c = i ⊙ u + f_L ⊙ c_L + f_R ⊙ c_R; h = o ⊙ tanh(c). Leaves are words (no children: h_L = h_R = 0); inner
    constituents have no word (x = 0).
    """

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        self.input_gates = nn.Linear(input_size, 5 * hidden_size)  # i, f_L, f_R, o, u from x (with the biases)
        self.left_gates = nn.Linear(hidden_size, 5 * hidden_size, bias=False)
        self.right_gates = nn.Linear(hidden_size, 5 * hidden_size, bias=False)

    def forward(self, inputs: torch.Tensor, batch: TreeBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """``inputs``: one row per node (zeros for inner constituents). Returns ``(h, c)`` of every node."""
        if batch.left is None:
            raise ValueError("BinaryTreeLSTMCell needs a batch from TreeBatch.from_binary_trees")
        H = self.hidden_size
        gates_x = self.input_gates(inputs)
        # Row num_nodes stays zero: the "child" of a leaf.
        h = inputs.new_zeros(batch.num_nodes + 1, H)
        c = inputs.new_zeros(batch.num_nodes + 1, H)
        left = torch.where(batch.left < 0, batch.num_nodes, batch.left)
        right = torch.where(batch.right < 0, batch.num_nodes, batch.right)
        for level in batch.levels:
            nodes = level.nodes
            l, r = left[nodes], right[nodes]
            gates = gates_x[nodes] + self.left_gates(h[l]) + self.right_gates(h[r])
            i, f_left, f_right, o, u = gates.chunk(5, dim=-1)
            cell = (torch.sigmoid(i) * torch.tanh(u) + torch.sigmoid(f_left) * c[l] + torch.sigmoid(f_right) * c[r])
            hidden = torch.sigmoid(o) * torch.tanh(cell)
            h = h.index_copy(0, nodes, hidden)
            c = c.index_copy(0, nodes, cell)
        return h[:-1], c[:-1]
