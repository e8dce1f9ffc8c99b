"""Binary constituency trees for the N-ary (N=2) Tree-LSTM: left markovization, unary chains collapsed (§2.2)."""

from __future__ import annotations

from st_contrastive.parsing.parsed_sentence import Tree


def binarize(tree: Tree | int) -> Tree | int:
    """The tree with every node given exactly two children.

    A node with one child is collapsed into it (a pre-terminal becomes its word's position; ``ROOT → S`` becomes
    one node labelled ``ROOT+S``). A node with children c1 … cn, n > 2, is factored to the left,
    ``(((c1 c2) c3) … cn)``; the new inner nodes are labelled ``@label`` (markovization keeps only the parent's
    label, so inner nodes of the same parent share one label).
    """
    if isinstance(tree, int):
        return tree
    if len(tree.children) == 1:
        child = binarize(tree.children[0])
        return Tree(f"{tree.label}+{child.label}", child.children) if isinstance(child, Tree) else child
    children = [binarize(child) for child in tree.children]
    if len(children) == 0:
        raise ValueError(f"the constituent {tree.label!r} has no children")
    left = children[0]
    for right in children[1:-1]:
        left = Tree(f"@{tree.label}", [left, right])
    return Tree(tree.label, [left, children[-1]])
