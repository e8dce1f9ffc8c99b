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

    def to(self, device) -> TreeBatch:
        move = lambda t: None if t is None else t.to(device)
        return TreeBatch(move(self.token_index),
                         [Level(move(v.nodes), move(v.edge_child), move(v.edge_parent_position)) for v in self.levels],
                         move(self.roots), move(self.left), move(self.right))

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
        children: list[list[int]] = []
        token_index: list[int] = []
        roots: list[int] = []
        token_offset = 0
        for tree, length in zip(trees, lengths, strict=True):
            leaf_node = {}
            for position in range(length):
                leaf_node[position] = len(children)
                children.append([])
                token_index.append(token_offset + position)

            def add(node: Tree | int, leaf_node: dict[int, int] = leaf_node) -> int:
                if isinstance(node, int):
                    return leaf_node[node]
                if len(node.children) != 2:
                    raise ValueError(f"a binary tree node has two children, {node.label!r} has "
                                     f"{len(node.children)}: binarize the tree first")
                kids = [add(child, leaf_node) for child in node.children]
                children.append(kids)
                token_index.append(-1)
                return len(children) - 1

            roots.append(add(tree))
            token_offset += length
        batch = cls._build(children, token_index, roots)
        left = [kids[0] if kids else -1 for kids in children]
        right = [kids[1] if kids else -1 for kids in children]
        batch.left, batch.right = torch.tensor(left), torch.tensor(right)
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
            levels.append(Level(torch.tensor(nodes), torch.tensor(edge_child, dtype=torch.long),
                                torch.tensor(edge_parent, dtype=torch.long)))
        return cls(torch.tensor(token_index), levels, torch.tensor(roots))
