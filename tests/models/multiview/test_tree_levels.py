"""The Tree-LSTM level steps with their own backward (binary_levels.py, child_sum_levels.py), checked by
torch.autograd.gradcheck: their gradients against finite differences of their own forward, in double precision."""

import pytest
import torch

from st_contrastive.models.multiview.binary_levels import BinaryLevels
from st_contrastive.models.multiview.child_sum_levels import ChildSumLevels
from st_contrastive.models.multiview.tree_batch import TreeBatch
from st_contrastive.parsing import ParsedSentence, binarize, project_heads

HEADS = [[0], [2, 3, 4, 0], [0, 1, 1, 1, 1], [2, 0, 2, 5, 3, 5]]  # one word, a chain, a star, a mixed tree
H = 3


def binary_batch() -> TreeBatch:
    """HEADS as binarized constituency trees (head projection, then binarization)."""
    trees = [binarize(project_heads(ParsedSentence(["w"] * len(h), ["X"] * len(h), h, ["d"] * len(h)))) for h in HEADS]
    return TreeBatch.from_binary_trees(trees, [len(h) for h in HEADS])


def leaf_gates(batch: TreeBatch) -> torch.Tensor:
    """Random i, o, u pre-activations of the leaves."""
    return torch.randn(len(batch.levels[0].nodes), 3 * H, dtype=torch.float64, requires_grad=True)


def both_outputs(h: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """h and c as one output, so that gradcheck checks the gradients through both."""
    return torch.cat([h, c], dim=1)


def test_binary_levels_gradients_match_finite_differences():
    torch.manual_seed(0)
    batch = binary_batch()
    children = torch.stack([batch.left, batch.right], dim=1)
    leaves, inner = batch.levels[0].nodes, [level.nodes for level in batch.levels[1:]]
    bias = torch.randn(5 * H, dtype=torch.float64, requires_grad=True)
    weight = torch.randn(5 * H, 2 * H, dtype=torch.float64, requires_grad=True)

    def levels_step(gates, bias, weight):
        return both_outputs(*BinaryLevels.apply(gates, bias, weight, leaves, children, inner))

    assert torch.autograd.gradcheck(levels_step, (leaf_gates(batch), bias, weight))


@pytest.mark.parametrize("attention", [False, True], ids=["child-sum", "attentive"])
def test_child_sum_levels_gradients_match_finite_differences(attention):
    torch.manual_seed(0)
    batch = TreeBatch.from_heads(HEADS)
    levels = [(level.nodes, level.edge_child, level.edge_parent_position) for level in batch.levels[1:]]
    inner_nodes = sum(len(level[0]) for level in levels)
    inner_gates = torch.randn(inner_nodes, (5 if attention else 4) * H, dtype=torch.float64, requires_grad=True)
    iou_weight = torch.randn(3 * H, H, dtype=torch.float64, requires_grad=True)
    child_weight = torch.randn((2 if attention else 1) * H, H, dtype=torch.float64, requires_grad=True)
    key_bias = torch.randn(H, dtype=torch.float64, requires_grad=True) if attention else None
    inputs = (leaf_gates(batch), inner_gates, iou_weight, child_weight) + ((key_bias,) if attention else ())

    def levels_step(leaf, gates, iou, child, *key):
        leaves = batch.levels[0].nodes
        return both_outputs(*ChildSumLevels.apply(leaf, gates, iou, child, key[0] if key else None, leaves, levels))

    assert torch.autograd.gradcheck(levels_step, inputs)


@pytest.mark.parametrize("cell", ["binary", "child-sum"])
def test_a_caller_that_reads_only_h_gets_the_same_gradients(cell):
    # c's gradient arrives as None (no zeros made for it): the leaves' gradient equals one with c's given as zeros.
    torch.manual_seed(0)
    if cell == "binary":
        batch = binary_batch()
        children = torch.stack([batch.left, batch.right], dim=1)
        inner = [level.nodes for level in batch.levels[1:]]
        bias, weight = torch.randn(5 * H, dtype=torch.float64), torch.randn(5 * H, 2 * H, dtype=torch.float64)
        step = lambda gates: BinaryLevels.apply(gates, bias, weight, batch.levels[0].nodes, children, inner)
    else:
        batch = TreeBatch.from_heads(HEADS)
        levels = [(level.nodes, level.edge_child, level.edge_parent_position) for level in batch.levels[1:]]
        inner_gates = torch.randn(sum(len(level[0]) for level in levels), 4 * H, dtype=torch.float64)
        iou, child = torch.randn(3 * H, H, dtype=torch.float64), torch.randn(H, H, dtype=torch.float64)
        step = lambda gates: ChildSumLevels.apply(gates, inner_gates, iou, child, None, batch.levels[0].nodes, levels)
    gates = leaf_gates(batch)
    h, _ = step(gates)
    (only_h,) = torch.autograd.grad(h[batch.roots].sum(), gates)
    h, c = step(gates)
    (both,) = torch.autograd.grad(h[batch.roots].sum() + 0 * c.sum(), gates)
    torch.testing.assert_close(only_h, both)
    assert only_h.abs().sum() > 0
