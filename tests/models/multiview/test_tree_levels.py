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


def leaf_states(batch: TreeBatch) -> torch.Tensor:
    """Random h and c on the leaves' rows, zeros elsewhere (as the cells fill them)."""
    states = torch.zeros(batch.num_nodes, 2 * H, dtype=torch.float64)
    leaves = batch.levels[0].nodes
    states[leaves] = torch.randn(len(leaves), 2 * H, dtype=torch.float64)
    return states.requires_grad_()


def test_binary_levels_gradients_match_finite_differences():
    torch.manual_seed(0)
    trees = [binarize(project_heads(ParsedSentence(["w"] * len(h), ["X"] * len(h), h, ["d"] * len(h)))) for h in HEADS]
    batch = TreeBatch.from_binary_trees(trees, [len(h) for h in HEADS])
    children = torch.stack([batch.left, batch.right], dim=1)
    inner = [level.nodes for level in batch.levels[1:]]
    bias = torch.randn(5 * H, dtype=torch.float64, requires_grad=True)
    weight = torch.randn(5 * H, 2 * H, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda states, bias, weight: BinaryLevels.apply(states, bias, weight, children, inner),
        (leaf_states(batch), bias, weight),
    )


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
    inputs = (leaf_states(batch), inner_gates, iou_weight, child_weight) + ((key_bias,) if attention else ())

    def levels_step(states, gates, iou, child, *key):
        return ChildSumLevels.apply(states, gates, iou, child, key[0] if key else None, levels)

    assert torch.autograd.gradcheck(levels_step, inputs)
