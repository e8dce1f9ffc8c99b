"""Batches of consecutive sentences for context-prediction objectives (QuickThought, multi-view)."""

from __future__ import annotations

from collections.abc import Iterator

import torch
from datasets import Dataset
from sentence_transformers.base.sampler import DefaultBatchSampler

from st_contrastive.arguments import at_least
from st_contrastive.arguments import seed as seed_rule


class ContextBlockBatchSampler(DefaultBatchSampler):
    """Cuts the dataset, in corpus order, into blocks of ``batch_size`` consecutive rows and yields the blocks in
    an order shuffled every epoch (seed + epoch). Consecutive sentences stay together, so each sentence's context
    sentences are in its batch (except at a block's two edges); every row is used once per epoch. A last block of
    a single row could hold no context pair, so it joins the block before it (801 rows at ``batch_size=400``: blocks
    of 400 and 401); with ``drop_last`` a short last block is dropped instead. Use it with
    ``SentenceTransformerTrainingArguments(batch_sampler=ContextBlockBatchSampler)`` on a dataset in corpus order
    (e.g. :func:`~st_contrastive.data.load_sentence_corpus`).
    """

    def __init__(
        self,
        dataset: Dataset,
        batch_size: int,
        drop_last: bool = False,
        valid_label_columns: list[str] | None = None,
        generator: torch.Generator | None = None,
        seed: int = 0,
    ) -> None:
        at_least("batch_size", batch_size, 1)
        seed_rule("seed", seed)
        super().__init__(
            dataset,
            batch_size=batch_size,
            drop_last=drop_last,
            valid_label_columns=valid_label_columns,
            generator=generator,
            seed=seed,
        )
        self.num_rows = len(dataset)
        if self.num_rows < 2:
            raise ValueError(
                f"a context objective needs at least 2 consecutive sentences, the dataset has {self.num_rows}"
            )

    def _blocks(self) -> list[range]:
        blocks = [
            range(start, min(start + self.batch_size, self.num_rows))
            for start in range(0, self.num_rows, self.batch_size)
        ]
        if self.drop_last and len(blocks[-1]) < self.batch_size:
            blocks.pop()
        elif len(blocks) > 1 and len(blocks[-1]) == 1:  # a lone sentence has no neighbour to find: a wasted step
            blocks[-2:] = [range(blocks[-2].start, self.num_rows)]
        return blocks

    def __iter__(self) -> Iterator[list[int]]:
        blocks = self._blocks()
        generator = torch.Generator().manual_seed(self.seed + self.epoch)
        for b in torch.randperm(len(blocks), generator=generator).tolist():
            yield list(blocks[b])

    def __len__(self) -> int:
        return len(self._blocks())
