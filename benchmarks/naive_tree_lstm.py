"""Naive per-node Tree-LSTMs: the reference the level-batched cells are tested against and benchmarked with.

Each function applies Tai et al.'s equations to one node at a time, recursing into its children first, with the
parameters of a :class:`~st_contrastive.models.multiview.child_sum_tree_lstm.ChildSumTreeLSTMCell` or
:class:`~st_contrastive.models.multiview.binary_tree_lstm.BinaryTreeLSTMCell`: the same math, one matrix-vector
product per gate and node, no batching.
"""

from __future__ import annotations

import torch

from st_contrastive.models.multiview.binary_tree_lstm import BinaryTreeLSTMCell
from st_contrastive.models.multiview.child_sum_tree_lstm import ChildSumTreeLSTMCell
from st_contrastive.parsing import Tree


def naive_child_sum(
    cell: ChildSumTreeLSTMCell, x: torch.Tensor, children: list[list[int]], node: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(h, c)`` of ``node``; ``x`` has one row per token, ``children`` the dependents of each token."""
    H = cell.hidden_size
    kids = [naive_child_sum(cell, x, children, child) for child in children[node]]
    gx = cell.input_gates.weight @ x[node] + cell.input_gates.bias
    if kids:
        hs = torch.stack([h for h, _ in kids])
        if cell.attention:
            q = cell.query.weight @ x[node] + cell.query.bias
            scores = torch.stack(
                [
                    torch.dot(q, cell.key.weight @ h + cell.key.bias)
                    / (q.norm() * (cell.key.weight @ h + cell.key.bias).norm())
                    for h in hs
                ]
            )
            h_tilde = (torch.softmax(scores, 0)[:, None] * hs).sum(0)
        else:
            h_tilde = hs.sum(0)
    else:
        h_tilde = torch.zeros(H, dtype=x.dtype)
    iou = gx[: 3 * H] + cell.hidden_iou.weight @ h_tilde
    i, o, u = iou[:H], iou[H : 2 * H], iou[2 * H :]
    c = torch.sigmoid(i) * torch.tanh(u)
    for h_k, c_k in kids:
        c = c + torch.sigmoid(gx[3 * H :] + cell.hidden_f.weight @ h_k) * c_k
    return torch.sigmoid(o) * torch.tanh(c), c


def naive_binary(cell: BinaryTreeLSTMCell, x: torch.Tensor, tree: Tree | int) -> tuple[torch.Tensor, torch.Tensor]:
    """``(h, c)`` of ``tree``'s root; a leaf is a token position (its row of ``x``, no children), an inner node
    has no word (x = 0)."""
    H = cell.hidden_size
    if isinstance(tree, int):
        zeros = torch.zeros(H, dtype=x.dtype)
        x_node, (h_l, c_l), (h_r, c_r) = x[tree], (zeros, zeros), (zeros, zeros)
    else:
        x_node = torch.zeros(x.shape[1], dtype=x.dtype)
        (h_l, c_l), (h_r, c_r) = (naive_binary(cell, x, child) for child in tree.children)
    g = (
        cell.input_gates.weight @ x_node
        + cell.input_gates.bias
        + cell.left_gates.weight @ h_l
        + cell.right_gates.weight @ h_r
    )
    i, f_l, f_r, o, u = g.split(H)
    c = torch.sigmoid(i) * torch.tanh(u) + torch.sigmoid(f_l) * c_l + torch.sigmoid(f_r) * c_r
    return torch.sigmoid(o) * torch.tanh(c), c
