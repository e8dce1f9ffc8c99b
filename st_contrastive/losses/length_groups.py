"""A column of texts embedded in groups of similar length, each cut to its own longest text, with the graph kept.

A collator pads a column to its longest text, and an encoder computes every padded token as if it were a word. With
DeCLUTR's Beta-distributed span lengths a third of a column's tokens can be padding. Sorting the column by length
and cutting it into a few groups, each trimmed to its first (longest) row by sentence-transformers' own mini-batch
slicing, computes almost none of it; the embeddings go back to the column's order (:class:`LengthGroups`). The
cached losses sort their mini-batches the same way (:func:`by_length`).

Each group is one more call of the encoder, and on a GPU a call's kernel launches cost as much as thousands of
tokens of its work: a small model in bf16 is bound by them. On a CPU a call's backward pass costs the work of some
dozens of tokens beside its own (each call adds a gradient of every weight, the word embeddings' included). So a
group is cut only where the padding it saves outweighs that (:data:`CALL_TOKENS`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from st_contrastive.arguments import at_least
from st_contrastive.models.masking import IGNORE_INDEX
from st_contrastive.st_internals import create_minibatch


def by_length(
    features: dict[str, torch.Tensor], mlm_labels: torch.Tensor | None = None, sort: bool = True
) -> tuple[dict[str, torch.Tensor], torch.Tensor | None, torch.Tensor, torch.Tensor]:
    """The column's rows longest first (its features and MLM labels; in their own order unless ``sort``), their
    lengths in that order (on the CPU), and the permutation that puts rows of that order back in the column's."""
    rows = len(features["input_ids"])
    lengths = features["attention_mask"].sum(dim=1).cpu() if sort and "attention_mask" in features else None
    order = torch.arange(rows) if lengths is None else lengths.argsort(descending=True, stable=True)
    features = {
        k: v[order.to(v.device)] if isinstance(v, torch.Tensor) and len(v) == rows else v for k, v in features.items()
    }
    if mlm_labels is not None:
        mlm_labels = mlm_labels[order.to(mlm_labels.device)]
    width = features["input_ids"].shape[1]
    lengths = torch.full((rows,), width) if lengths is None else lengths[order]
    return features, mlm_labels, lengths, order.argsort().to(features["input_ids"].device)


# What one more encoder call costs, in tokens of the encoder's work, by device type: on a GPU a call's kernel launches
# take about as long as this many tokens (H200, MiniLM- and BERT-base-sized encoders in bf16), on a CPU a call's
# backward pass about as long as this many (all-MiniLM-L6-v2, 2 cores; both measured in docs/benchmarks.md).
CALL_TOKENS = {"cuda": 4096, "cpu": 64}


def checked_groups(length_groups: int) -> int:
    """A loss's ``length_groups``, the rule every grouping loss shares: at least 1 (one padded pass per column)."""
    at_least("length_groups", length_groups, 1)
    return length_groups


def cheapest_groups(lengths: Sequence[int], groups: int, call_tokens: int = 0) -> list[tuple[int, int]]:
    """Cut ``lengths`` (longest first) into at most ``groups`` runs ``[begin, end)``, each padded to its first
    length, that cost the least: the tokens computed plus ``call_tokens`` per run. Dynamic programming over the cut
    points, which need only fall where the length changes (at most the longest length's count of them, whatever the
    batch)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    n = len(lengths)
    if n == 0:
        return []
    points = np.concatenate([[0], np.flatnonzero(lengths[1:] != lengths[:-1]) + 1, [n]])  # run starts, then n
    starts, ends = points[:-1], points
    valid = starts[:, None] < ends[None, :]
    run = np.where(valid, (ends[None, :] - starts[:, None]) * lengths[starts][:, None], np.iinfo(np.int64).max // 4)
    cost = run[0]  # one run [0, end)
    back, fewest = [], [cost[-1]]  # fewest[k]: the tokens of the cheapest cut into at most k + 1 runs
    for _ in range(min(groups, len(starts)) - 1):
        candidate = cost[: len(starts), None] + run  # the last run starts at starts[i]
        candidate[0] = run[0]  # starting at row 0 is one run, whatever came before
        best = candidate.argmin(axis=0)
        cost = candidate[best, np.arange(len(ends))]
        back.append(best)
        fewest.append(cost[-1])
    extra = min(range(len(fewest)), key=lambda k: fewest[k] + k * call_tokens)  # runs beyond the first worth paying
    back = back[:extra]
    bounds, end = [], len(ends) - 1
    for best in reversed(back):
        start = int(best[end])
        if start == 0:
            break
        bounds.append((int(points[start]), int(points[end])))
        end = start
    bounds.append((0, int(points[end])))
    return bounds[::-1]


@dataclass
class LengthGroups:
    """The spans of a batch's columns (DeCLUTR's anchors and positives) sorted by length together and cut into
    :func:`cheapest_groups`, ready to embed: more rows per group than one column has, so fewer calls for the same
    padding. Everything that needs the lengths or the masked positions on the host is read here, when the batch
    arrives and before the encoder runs: on a GPU the step then never waits for the encoder's work to finish."""

    groups: list[dict[str, torch.Tensor]]  # each trimmed to its longest row; made once, so that AdaptiveLayerLoss
    restore: torch.Tensor  # finds each layer's outputs in the same dicts at every layer's call
    sizes: list[int]  # rows of each column
    masked: list[tuple[tuple[torch.Tensor, torch.Tensor], torch.Tensor]] | None  # per group: positions, labels

    @classmethod
    def of(
        cls, columns: list[dict[str, torch.Tensor]], groups: int, mlm_labels: torch.Tensor | None = None
    ) -> LengthGroups:
        """``columns`` in at most ``groups`` groups; ``mlm_labels``: those of the first column, whose masked
        positions are then kept too. One group is a padded pass per column, in the rows' own order (and dropout
        draws its masks in it), as sentence-transformers' losses embed."""
        sizes = [len(column["input_ids"]) for column in columns]
        if groups == 1:
            trimmed = [create_minibatch(column, 0, size) for column, size in zip(columns, sizes, strict=True)]
            labels = [mlm_labels] + [None] * (len(columns) - 1) if mlm_labels is not None else None
            restore = torch.arange(sum(sizes), device=columns[0]["input_ids"].device)
            return cls(trimmed, restore, sizes, _masked_positions(trimmed, labels))
        features, labels = _stacked(columns, mlm_labels)
        features, labels, lengths, restore = by_length(features, labels)
        call_tokens = CALL_TOKENS.get(features["input_ids"].device.type, 0)
        bounds = cheapest_groups(lengths.tolist(), groups, call_tokens)
        grouped = [create_minibatch(features, begin, end) for begin, end in bounds]  # drops unneeded padding
        group_labels = [labels[begin:end] for begin, end in bounds] if labels is not None else None
        return cls(grouped, restore, sizes, _masked_positions(grouped, group_labels))

    def embed(self, model) -> tuple[list[torch.Tensor], torch.Tensor | None, torch.Tensor | None]:
        """Each column's sentence embeddings in its own order; with MLM labels, also the token embeddings of the
        masked positions ``(masked, dim)`` and their labels ``(masked,)``, for the MLM head."""
        embeddings, tokens = [], []
        for number, group in enumerate(self.groups):
            out = model(group)
            embeddings.append(out["sentence_embedding"])
            if self.masked is not None:
                tokens.append(out["token_embeddings"][self.masked[number][0]])
        columns = list(torch.cat(embeddings)[self.restore].split(self.sizes))
        if self.masked is None:
            return columns, None, None
        return columns, torch.cat(tokens), torch.cat([labels for _, labels in self.masked])


def _stacked(
    columns: list[dict[str, torch.Tensor]], mlm_labels: torch.Tensor | None
) -> tuple[dict[str, torch.Tensor], torch.Tensor | None]:
    """The columns' rows as one column, each padded on the right to the widest (the groups trim it again), and the
    first column's MLM labels with every other row's positions unmasked."""
    width = max(column["input_ids"].shape[1] for column in columns)
    keys = [k for k, v in columns[0].items() if isinstance(v, torch.Tensor) and v.dim() == 2]

    def widened(tensor: torch.Tensor, value: int = 0) -> torch.Tensor:
        return F.pad(tensor, (0, width - tensor.shape[1]), value=value)

    features = {key: torch.cat([widened(column[key]) for column in columns]) for key in keys}
    if mlm_labels is None:
        return features, None
    others = sum(len(column["input_ids"]) for column in columns[1:])
    unmasked = mlm_labels.new_full((others, width), IGNORE_INDEX)
    return features, torch.cat([widened(mlm_labels, IGNORE_INDEX), unmasked])


def _masked_positions(groups: list[dict[str, torch.Tensor]], labels: list[torch.Tensor | None] | None):
    """Per group, the (row, column) positions of its masked tokens (within the group's trimmed width) and their
    labels; ``None`` when nothing is masked."""
    if labels is None:
        return None
    masked = []
    for group, group_labels in zip(groups, labels, strict=True):
        if group_labels is None:
            empty = torch.empty(0, dtype=torch.long, device=group["input_ids"].device)
            masked.append(((empty, empty), empty))
            continue
        group_labels = group_labels[:, : group["input_ids"].shape[1]]
        rows, columns = (group_labels != IGNORE_INDEX).nonzero(as_tuple=True)
        masked.append(((rows, columns), group_labels[rows, columns]))
    return masked
