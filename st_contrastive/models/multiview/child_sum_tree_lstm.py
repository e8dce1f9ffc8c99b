"""Child-sum Tree-LSTM (Tai et al., 2015) over dependency trees, with the paper's attentive child sum (DEP view)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from st_contrastive.arguments import at_least
from st_contrastive.models.multiview.child_sum_levels import ChildSumLevels
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
        at_least("input_size", input_size, 1)
        at_least("hidden_size", hidden_size, 1)
        self.input_size, self.hidden_size, self.attention = input_size, hidden_size, attention
        self.input_gates = nn.Linear(input_size, 4 * hidden_size)  # i, o, u, f from x (with the biases)
        self.hidden_iou = nn.Linear(hidden_size, 3 * hidden_size, bias=False)
        self.hidden_f = nn.Linear(hidden_size, hidden_size, bias=False)
        if attention:
            self.query = nn.Linear(input_size, hidden_size)
            self.key = nn.Linear(hidden_size, hidden_size)

    def forward(self, inputs: torch.Tensor, batch: TreeBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """``inputs``: one row per token (a dependency tree's nodes are its tokens). Returns ``(h, c)`` of every node,
        ``(num_nodes, hidden_size)``."""
        H = self.hidden_size
        # The step is bound by its matrix products: each is computed only for the nodes that read it. A leaf (height
        # 0) has no children, so no forget gate and no attention query: its word goes through i, o, u alone.
        x_weight, x_bias = self.input_gates.weight, self.input_gates.bias
        if self.attention:
            x_weight, x_bias = torch.cat([x_weight, self.query.weight]), torch.cat([x_bias, self.query.bias])
        leaves, inner = batch.levels[0].nodes, batch.levels[1:]
        # The nodes' words in level order, in one gather (one node-sized gradient in the backward pass); index_select's
        # backward is a scatter-add, where indexing's sorts the indices first.
        leaf_x, inner_x = inputs.index_select(0, torch.cat([level.nodes for level in batch.levels])).split(
            [len(leaves), batch.num_nodes - len(leaves)]
        )
        leaf_gates = F.linear(leaf_x, x_weight[: 3 * H], x_bias[: 3 * H])
        # Every inner node's gates from its word in one product; the levels' rows are consecutive slices of it.
        inner_gates = F.linear(inner_x, x_weight, x_bias)
        # Each child once through U^f and (attention) the key W_p h_k + b_p: one product per level. The leaves and
        # the levels run as one step with a backward of its own (child_sum_levels.py).
        child_weight = self.hidden_f.weight
        if self.attention:
            child_weight = torch.cat([child_weight, self.key.weight])
        levels = [(level.nodes, level.edge_child, level.edge_parent_position) for level in inner]
        return ChildSumLevels.apply(
            leaf_gates,
            inner_gates,
            self.hidden_iou.weight,
            child_weight,
            self.key.bias if self.attention else None,
            leaves,
            levels,
        )


class ChildSumTreeLSTM(nn.Module):
    """The dependency view (DEP): words → child-sum Tree-LSTM over each sentence's dependency tree; the root's
    hidden state is the sentence embedding. ``attention=True`` (the paper's choice) weights the children."""

    def __init__(
        self, num_words: int, word_dim: int, dim: int, frozen_embeddings: bool = False, attention: bool = True
    ) -> None:
        super().__init__()
        for argument, size in (("num_words", num_words), ("word_dim", word_dim), ("dim", dim)):
            at_least(argument, size, 1)
        self.embeddings = WordEmbeddings(num_words, word_dim, frozen=frozen_embeddings)
        self.cell = ChildSumTreeLSTMCell(word_dim, dim, attention=attention)

    def forward(self, features: dict[str, torch.Tensor]) -> torch.Tensor:
        words = self.embeddings(features["token_ids"])  # one row per token (= node), sentence by sentence
        batch = features["dependency_trees"].to(words.device, non_blocking=True)  # the host's copy need not wait
        hidden, _ = self.cell(words, batch)
        return hidden[batch.roots]
