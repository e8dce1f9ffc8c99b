"""TreeBatch's levels, built in tensor operations, equal a plain walk over the trees: heights by recursion, nodes
by height in node order, each level's edges parent by parent with the children in order."""

import random

import pytest

from st_contrastive.models.multiview.tree_batch import TreeBatch, inner_children
from st_contrastive.parsing import ParsedSentence, binarize, project_heads
from tests.models.multiview.test_tree_lstm import random_heads


def walked_levels(children: list[list[int]]) -> list[tuple[list[int], list[int], list[int]]]:
    """(nodes, edge_child, edge_parent_position) per height, from each node's children, the obvious way."""

    def height(node: int) -> int:
        return 1 + max(map(height, children[node])) if children[node] else 0

    heights = [height(node) for node in range(len(children))]
    levels = []
    for h in range(max(heights) + 1):
        nodes = [node for node in range(len(children)) if heights[node] == h]
        edges = [(child, position) for position, node in enumerate(nodes) for child in children[node]]
        levels.append((nodes, [child for child, _ in edges], [position for _, position in edges]))
    return levels


def as_lists(batch: TreeBatch) -> list[tuple[list[int], list[int], list[int]]]:
    return [(v.nodes.tolist(), v.edge_child.tolist(), v.edge_parent_position.tolist()) for v in batch.levels]


def sentences() -> list[list[int]]:
    rng = random.Random(1)
    return [[0], [2, 3, 4, 0], [0, 1, 1, 1, 1]] + [random_heads(rng.randint(2, 30), rng) for _ in range(20)]


def test_dependency_levels_equal_a_walk_over_the_trees():
    heads = sentences()
    children, offset = [], 0
    for sentence in heads:
        children += [
            [offset + t for t, head in enumerate(sentence) if head == node + 1] for node in range(len(sentence))
        ]
        offset += len(sentence)
    batch = TreeBatch.from_heads(heads)
    assert as_lists(batch) == walked_levels(children)
    assert batch.token_index.tolist() == list(range(offset))
    assert batch.roots.tolist() == [
        start + sentence.index(0) for start, sentence in zip(_starts(heads), heads, strict=True)
    ]


def test_binary_levels_equal_a_walk_over_the_trees():
    heads = sentences()
    trees = [binarize(project_heads(ParsedSentence(["w"] * len(h), ["X"] * len(h), h, ["d"] * len(h)))) for h in heads]
    batch = TreeBatch.from_binary_trees(trees, [len(h) for h in heads])
    children = []
    for tree, sentence in zip(trees, heads, strict=True):
        first = len(children)
        children += [[] for _ in sentence]
        children += [[first + left, first + right] for left, right in inner_children(tree, len(sentence))]
    assert as_lists(batch) == walked_levels(children)
    assert batch.left.tolist() == [kids[0] if kids else -1 for kids in children]
    assert batch.right.tolist() == [kids[1] if kids else -1 for kids in children]
    # The leaves in node order are the tokens in order: the binary cell reads one input row per token.
    assert batch.token_index[batch.levels[0].nodes].tolist() == list(range(sum(map(len, heads))))


def test_heads_on_a_cycle_are_refused():
    with pytest.raises(ValueError, match="cycle"):
        TreeBatch.from_heads([[0], [2, 3, 2]])  # tokens 2 and 3 of the second sentence head each other


def _starts(heads: list[list[int]]) -> list[int]:
    starts, offset = [], 0
    for sentence in heads:
        starts.append(offset)
        offset += len(sentence)
    return starts
