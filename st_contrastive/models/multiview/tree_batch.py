"""A batch of trees laid out for level-by-level computation: every node of every tree in one flat index space.

Nodes are grouped by height (leaves 0, a parent one above its highest child). A Tree-LSTM computes one height at
a time over all nodes of the whole batch, so the number of cell calls is the height of the tallest tree, not
the number of nodes. Each level keeps the edges into its nodes (child → position of the parent in the level),
which is what the child-sum cell sums over with ``index_add``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from st_contrastive.parsing.parsed_sentence import Tree


@dataclass
class Level:
    """The nodes of one height, and the edges into them (``parent_position`` indexes ``nodes``)."""

    nodes: torch.Tensor
    edge_child: torch.Tensor
    edge_parent_position: torch.Tensor


@dataclass
class TreeBatch:
    """``token_index[n]`` is node n's position in the batch's flat tokens, or -1 (an inner constituent has no
    word). ``left``/``right`` are the two children of each node of a binary tree (-1 for a leaf); ``roots`` are
    the root nodes of the trees in batch order."""

    token_index: torch.Tensor
    levels: list[Level]
    roots: torch.Tensor
    left: torch.Tensor | None = None
    right: torch.Tensor | None = None

    @property
    def num_nodes(self) -> int:
        return len(self.token_index)

    def to(self, device, non_blocking: bool = False) -> TreeBatch:
        move = lambda t: None if t is None else t.to(device, non_blocking=non_blocking)
        return TreeBatch(
            move(self.token_index),
            [Level(move(v.nodes), move(v.edge_child), move(v.edge_parent_position)) for v in self.levels],
            move(self.roots),
            move(self.left),
            move(self.right),
        )

    @classmethod
    def from_heads(cls, heads: list[list[int]]) -> TreeBatch:
        """Dependency trees: one node per token; ``heads[b][t]`` is token t's 1-based head, 0 for the root."""
        parents, children, roots, offset = [], [], [], 0
        for sentence in heads:
            for position, head in enumerate(sentence):
                if head:
                    parents.append(offset + head - 1)
                    children.append(offset + position)
                else:
                    roots.append(offset + position)
            offset += len(sentence)
        return cls._build(offset, parents, children, list(range(offset)), roots)

    @classmethod
    def from_binary_trees(cls, trees: list[Tree | int], lengths: list[int]) -> TreeBatch:
        """Binary constituency trees over token positions (``binarize``'s output); ``lengths`` are the
        sentences' token counts. Leaves are the tokens; inner nodes follow them."""
        return cls.from_binary_children(
            [inner_children(tree, n) for tree, n in zip(trees, lengths, strict=True)], lengths
        )

    @classmethod
    def from_binary_children(cls, sentences: list[list[tuple[int, int]]], lengths: list[int]) -> TreeBatch:
        """Binary trees in the compact form of :func:`inner_children`: per sentence of n tokens, its n − 1 inner
        nodes children-first, each as (left, right) where 0…n−1 are tokens and n + k is inner node k. The root
        is the last inner node (the token itself for a one-word sentence). The leaves (height 0), in node order, are
        the batch's tokens in order: one input row per token is one per leaf."""
        left: list[int] = []
        right: list[int] = []
        parents: list[int] = []  # the edges: each inner node twice, to its left child, then its right
        children: list[int] = []
        token_index: list[int] = []
        roots: list[int] = []
        token_offset = 0
        for inner, length in zip(sentences, lengths, strict=True):
            if len(inner) != length - 1:
                raise ValueError(f"a binary tree over {length} tokens has {length - 1} inner nodes, not {len(inner)}")
            first = len(left)
            left += [-1] * length
            right += [-1] * length
            token_index += range(token_offset, token_offset + length)
            parents += [node for node in range(first + length, first + 2 * length - 1) for _ in range(2)]
            children += [first + child for pair in inner for child in pair]
            left += [first + child for child, _ in inner]
            right += [first + child for _, child in inner]
            token_index += [-1] * len(inner)
            roots.append(len(left) - 1)
            token_offset += length
        batch = cls._build(len(left), parents, children, token_index, roots)
        batch.left, batch.right = torch.tensor(left), torch.tensor(right)
        return batch

    @classmethod
    def _build(
        cls, num_nodes: int, parents: list[int], children: list[int], token_index: list[int], roots: list[int]
    ) -> TreeBatch:
        """The levels from the edges ``parents[e] → children[e]`` (each node's children in their order), in tensor
        operations: the batch is built once a training step, and a Python walk over its nodes cost as much as a
        level of the cell."""
        parent = torch.tensor(parents, dtype=torch.long)
        child = torch.tensor(children, dtype=torch.long)
        # A parent is one above its highest child: push heights up one level a pass until none moves (the tallest
        # tree's height + 1 passes; more than one per node means a cycle).
        height = torch.zeros(num_nodes, dtype=torch.long)
        for _ in range(num_nodes + 1):
            above = height.scatter_reduce(0, parent, height[child] + 1, "amax")
            if torch.equal(above, height):
                break
            height = above
        else:
            raise ValueError("the heads form a cycle: every node of a tree is below its root")
        # Nodes by height (in node order within a height); edges by their parent's height, then parent (each
        # parent's children in their order): one level's edges are consecutive.
        nodes = torch.argsort(height, stable=True)
        sizes = torch.bincount(height).tolist()
        position = torch.empty_like(nodes)  # a node's position in its level
        level_sizes = torch.tensor(sizes)
        position[nodes] = torch.arange(num_nodes) - (level_sizes.cumsum(0) - level_sizes)[height[nodes]]
        edge_height = height[parent]
        edges = torch.argsort(edge_height * num_nodes + parent, stable=True)
        edge_sizes = torch.bincount(edge_height, minlength=len(sizes)).tolist()
        levels = [
            Level(level_nodes, edge_child, edge_parent)
            for level_nodes, edge_child, edge_parent in zip(
                nodes.split(sizes),
                child[edges].split(edge_sizes),
                position[parent[edges]].split(edge_sizes),
                strict=True,
            )
        ]
        return cls(torch.tensor(token_index), levels, torch.tensor(roots))


def inner_children(tree: Tree | int, length: int) -> list[tuple[int, int]]:
    """A binary tree over ``length`` tokens as its inner nodes children-first: (left, right) per node, where
    0…length−1 are tokens and length + k is the k-th inner node. Small, flat and JSON/tensor friendly."""
    inner: list[tuple[int, int]] = []

    def add(node: Tree | int) -> int:
        if isinstance(node, int):
            if not 0 <= node < length:
                raise ValueError(f"the tree has a leaf {node} outside the sentence's {length} tokens")
            return node
        if len(node.children) != 2:
            raise ValueError(
                f"a binary tree node has two children, {node.label!r} has {len(node.children)}: binarize the tree first"
            )
        left, right = (add(child) for child in node.children)
        inner.append((left, right))
        return length + len(inner) - 1

    add(tree)
    return inner
