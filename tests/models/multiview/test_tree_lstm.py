"""Level-batched Tree-LSTM cells equal the naive per-node recursion (benchmarks/naive_tree_lstm.py), forward and
gradients, on random trees and on single-word, chain and star trees."""

import random

import pytest
import torch

from benchmarks.naive_tree_lstm import naive_binary, naive_child_sum
from st_contrastive.models.multiview.binary_tree_lstm import BinaryTreeLSTMCell
from st_contrastive.models.multiview.child_sum_tree_lstm import ChildSumTreeLSTMCell
from st_contrastive.models.multiview.tree_batch import TreeBatch
from st_contrastive.parsing import ParsedSentence, binarize, project_heads

DOUBLE = torch.float64  # compare at 1e-5 without float32 noise from the summation order


def random_heads(n: int, rng: random.Random) -> list[int]:
    """A random dependency tree over n tokens: each token but the root hangs from one placed before it."""
    order = list(range(n))
    rng.shuffle(order)
    heads = [0] * n
    for k, token in enumerate(order[1:], start=1):
        heads[token] = order[rng.randrange(k)] + 1
    return heads


SHAPES = [[0], [2, 3, 4, 0], [0, 1, 1, 1, 1]]  # single word, chain, star


def depth(heads: list[int], token: int) -> int:
    """Edges from ``token`` up to the root: one cell call per level means the tallest tree's depth + 1 calls."""
    steps = 0
    while heads[token]:
        token, steps = heads[token] - 1, steps + 1
    return steps


def sentences():
    rng = random.Random(0)
    return SHAPES + [random_heads(rng.randint(2, 12), rng) for _ in range(12)]


def compare(cell, batched_roots, naive_roots, inputs):
    """Equal roots, and equal gradients of the same scalar for inputs and every parameter."""
    torch.testing.assert_close(batched_roots, naive_roots, atol=1e-5, rtol=0)
    weights = torch.randn_like(batched_roots)
    grads = []
    for roots in (batched_roots, naive_roots):
        cell.zero_grad()
        inputs.grad = None
        (roots * weights).sum().backward()
        grads.append([inputs.grad.clone(), *(p.grad.clone() for p in cell.parameters())])
    for batched, naive in zip(*grads):
        torch.testing.assert_close(batched, naive, atol=1e-5, rtol=0)


@pytest.mark.parametrize("attention", [False, True], ids=["child-sum", "attentive"])
def test_child_sum_cell_equals_per_node_recursion(attention):
    torch.manual_seed(0)
    heads = sentences()
    cell = ChildSumTreeLSTMCell(6, 5, attention=attention).to(DOUBLE)
    batch = TreeBatch.from_heads(heads)
    inputs = torch.randn(batch.num_nodes, 6, dtype=DOUBLE, requires_grad=True)
    h, _ = cell(inputs, batch)
    naive_roots, offset = [], 0
    for sentence in heads:
        parsed = ParsedSentence(["w"] * len(sentence), ["X"] * len(sentence), sentence, ["dep"] * len(sentence))
        children = parsed.dependents()
        naive_roots.append(naive_child_sum(cell, inputs[offset:], children, parsed.root)[0])
        offset += len(sentence)
    assert len(batch.levels) == 1 + max(depth(sentence, t) for sentence in heads for t in range(len(sentence)))
    compare(cell, h[batch.roots], torch.stack(naive_roots), inputs)


def test_binary_cell_equals_per_node_recursion():
    torch.manual_seed(0)
    heads = sentences()
    trees = [
        binarize(project_heads(ParsedSentence(["w"] * len(s), ["X"] * len(s), s, ["dep"] * len(s)))) for s in heads
    ]
    lengths = [len(s) for s in heads]
    cell = BinaryTreeLSTMCell(6, 5).to(DOUBLE)
    batch = TreeBatch.from_binary_trees(trees, lengths)
    words = torch.randn(sum(lengths), 6, dtype=DOUBLE, requires_grad=True)
    h, _ = cell(words, batch)
    naive_roots, offset = [], 0
    for tree, length in zip(trees, lengths):
        naive_roots.append(naive_binary(cell, words[offset : offset + length], tree)[0])
        offset += length
    compare(cell, h[batch.roots], torch.stack(naive_roots), words)


@pytest.mark.parametrize("cell_type", ["child-sum", "binary"])
def test_under_bf16_autocast_the_states_take_the_gates_dtype(cell_type):
    # CUDA's index_copy refuses float32 states filled with bfloat16 gates (seen on an H200); the CPU's casts
    # silently, so the states' dtype is what this checks: the gates' under autocast, float32 without it.
    heads = sentences()
    if cell_type == "child-sum":
        cell, batch = ChildSumTreeLSTMCell(6, 5), TreeBatch.from_heads(heads)
    else:
        trees = [
            binarize(project_heads(ParsedSentence(["w"] * len(s), ["X"] * len(s), s, ["dep"] * len(s)))) for s in heads
        ]
        cell, batch = BinaryTreeLSTMCell(6, 5), TreeBatch.from_binary_trees(trees, [len(s) for s in heads])
    inputs = torch.randn(sum(len(s) for s in heads), 6)  # one row per token
    with torch.autocast("cpu", dtype=torch.bfloat16):
        h, c = cell(inputs, batch)
    assert h.dtype == c.dtype == torch.bfloat16
    h[batch.roots].float().sum().backward()
    assert all(p.grad is not None and p.grad.dtype == torch.float32 for p in cell.parameters())
    h, c = cell(inputs, batch)
    assert h.dtype == c.dtype == torch.float32


def test_binary_batches_refuse_unbinarized_trees():
    tree = project_heads(ParsedSentence(["a", "b", "c"], ["X"] * 3, [0, 1, 1], ["dep"] * 3))  # 3 children
    with pytest.raises(ValueError, match="binarize the tree first"):
        TreeBatch.from_binary_trees([tree], [3])
    with pytest.raises(ValueError, match="from_binary_trees"):
        BinaryTreeLSTMCell(2, 2)(torch.zeros(3, 2), TreeBatch.from_heads([[0, 1, 1]]))
    # One input row per token: a row per node (5 for these 3 tokens) is refused, not read past the words.
    with pytest.raises(ValueError, match="one row per token: 5 rows for the batch's 3 tokens"):
        BinaryTreeLSTMCell(2, 2)(torch.zeros(5, 2), TreeBatch.from_binary_trees([binarize(tree)], [3]))
