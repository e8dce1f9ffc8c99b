"""Binary (N-ary, N=2) Tree-LSTM (Tai et al., 2015) over binarized constituency trees (CONST view)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from st_contrastive.arguments import at_least
from st_contrastive.models.multiview.binary_levels import BinaryLevels
from st_contrastive.models.multiview.tree_batch import TreeBatch
from st_contrastive.models.multiview.word_embeddings import WordEmbeddings


class BinaryTreeLSTMCell(nn.Module):
    """Tai et al.'s N-ary cell with N=2, one tree height at a time over a whole :class:`TreeBatch`.

    Separate parameters for the left and the right child: every gate g ∈ {i, f_L, f_R, o, u} is
    W_g x + U_g^L h_L + U_g^R h_R + b_g, so each child's forget gate sees both children (Tai's U^{(f)}_{kl}).
    c = i ⊙ u + f_L ⊙ c_L + f_R ⊙ c_R; h = o ⊙ tanh(c). Leaves are words (no children: h_L = h_R = 0); inner
    constituents have no word (x = 0: their input gates are the biases).
    """

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        at_least("input_size", input_size, 1)
        at_least("hidden_size", hidden_size, 1)
        self.input_size, self.hidden_size = input_size, hidden_size
        self.input_gates = nn.Linear(input_size, 5 * hidden_size)  # i, f_L, f_R, o, u from x (with the biases)
        self.left_gates = nn.Linear(hidden_size, 5 * hidden_size, bias=False)
        self.right_gates = nn.Linear(hidden_size, 5 * hidden_size, bias=False)

    def forward(self, inputs: torch.Tensor, batch: TreeBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """``inputs``: one row per token, the batch's sentences one after another (the leaves, which are the
        tokens, in node order). Returns ``(h, c)`` of every node, ``(num_nodes, hidden_size)``."""
        if batch.left is None:
            raise ValueError("BinaryTreeLSTMCell needs a batch of binary trees (TreeBatch.from_binary_trees)")
        leaves = batch.levels[0].nodes  # height 0 holds exactly the leaves (a mask's nonzero() would wait for a GPU)
        if len(inputs) != len(leaves):
            raise ValueError(f"inputs has one row per token: {len(inputs)} rows for the batch's {len(leaves)} tokens")
        H = self.hidden_size
        # A leaf has no children, so its forget gates read nothing: its word goes through i, o, u alone. An inner
        # constituent has no word: its input gates are the biases alone, added in its level's product.
        weight, bias = self.input_gates.weight, self.input_gates.bias
        iou_weight, iou_bias = torch.cat([weight[:H], weight[3 * H :]]), torch.cat([bias[:H], bias[3 * H :]])
        leaf_gates = F.linear(inputs, iou_weight, iou_bias)
        # The levels in one step with a backward of its own (binary_levels.py): both children in one gather and
        # one product per level, [h_L; h_R] @ [U^L; U^R] + the input gates' bias.
        children = torch.stack([batch.left, batch.right], dim=1)
        child_weight = torch.cat([self.left_gates.weight, self.right_gates.weight], dim=1)
        inner = [level.nodes for level in batch.levels[1:]]
        return BinaryLevels.apply(leaf_gates, bias, child_weight, leaves, children, inner)


class BinaryTreeLSTM(nn.Module):
    """The constituency view (CONST): words at the leaves → binary Tree-LSTM over each sentence's binarized
    constituency tree; the root's hidden state is the sentence embedding."""

    def __init__(self, num_words: int, word_dim: int, dim: int, frozen_embeddings: bool = False) -> None:
        super().__init__()
        for argument, size in (("num_words", num_words), ("word_dim", word_dim), ("dim", dim)):
            at_least(argument, size, 1)
        self.embeddings = WordEmbeddings(num_words, word_dim, frozen=frozen_embeddings)
        self.cell = BinaryTreeLSTMCell(word_dim, dim)

    def forward(self, features: dict[str, torch.Tensor]) -> torch.Tensor:
        words = self.embeddings(features["token_ids"])  # one row per token (= leaf), sentence by sentence
        batch = features["constituency_trees"].to(words.device, non_blocking=True)  # the host's copy need not wait
        hidden, _ = self.cell(words, batch)
        return hidden[batch.roots]
