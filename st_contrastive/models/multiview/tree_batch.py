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
        children, token_index, roots, offset = [], [], [], 0
        for sentence in heads:
            node_children = [[] for _ in sentence]
            for position, head in enumerate(sentence):
                if head:
                    node_children[head - 1].append(offset + position)
                else:
                    roots.append(offset + position)
            children += node_children
            token_index += range(offset, offset + len(sentence))
            offset += len(sentence)
        return cls._build(children, token_index, roots)

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
        is the last inner node (the token itself for a one-word sentence)."""
        children: list[list[int]] = []
        token_index: list[int] = []
        roots: list[int] = []
        token_offset = 0
        for inner, length in zip(sentences, lengths, strict=True):
            if len(inner) != length - 1:
                raise ValueError(f"a binary tree over {length} tokens has {length - 1} inner nodes, not {len(inner)}")
            first = len(children)
            children += [[] for _ in range(length)]
            token_index += range(token_offset, token_offset + length)
            children += [[first + left, first + right] for left, right in inner]
            token_index += [-1] * len(inner)
            roots.append(len(children) - 1)
            token_offset += length
        batch = cls._build(children, token_index, roots)
        batch.left = torch.tensor([kids[0] if kids else -1 for kids in children], dtype=torch.long)
        batch.right = torch.tensor([kids[1] if kids else -1 for kids in children], dtype=torch.long)
        return batch

    @classmethod
    def _build(cls, children: list[list[int]], token_index: list[int], roots: list[int]) -> TreeBatch:
        height = [0] * len(children)
        # Children before parents: a post-order from each root, iterative (a 200-word chain is 200 deep).
        order: list[int] = []
        for root in roots:
            stack = [(root, False)]
            while stack:
                node, expanded = stack.pop()
                if expanded:
                    order.append(node)
                    continue
                stack.append((node, True))
                stack.extend((child, False) for child in children[node])
        for node in order:
            if children[node]:
                height[node] = 1 + max(height[child] for child in children[node])
        by_height: dict[int, list[int]] = {}
        for node in range(len(children)):
            by_height.setdefault(height[node], []).append(node)
        levels = []
        for h in sorted(by_height):
            nodes = by_height[h]
            edge_child, edge_parent = [], []
            for position, node in enumerate(nodes):
                edge_child += children[node]
                edge_parent += [position] * len(children[node])
            levels.append(
                Level(
                    torch.tensor(nodes),
                    torch.tensor(edge_child, dtype=torch.long),
                    torch.tensor(edge_parent, dtype=torch.long),
                )
            )
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
