"""Batches that keep every hypothesis of a premise together, so entailed hypotheses are in-batch positives."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import torch
from datasets import Dataset
from sentence_transformers.base.sampler import DefaultBatchSampler

from st_contrastive.arguments import at_least
from st_contrastive.arguments import seed as seed_rule

logger = logging.getLogger(__name__)


class PremiseGroupBatchSampler(DefaultBatchSampler):
    """Shuffles premise groups (reseeded every epoch) and packs whole groups into batches of ``batch_size`` rows.

    A group is never split, every row appears once per epoch, and a batch is closed when the next group would not
    fit (so batches may hold fewer rows). A group larger than ``batch_size`` gets a batch of its own.
    Use it with ``SentenceTransformerTrainingArguments(batch_sampler=PremiseGroupBatchSampler)``.
    """

    def __init__(
        self,
        dataset: Dataset,
        batch_size: int,
        drop_last: bool = False,
        valid_label_columns: list[str] | None = None,
        generator: torch.Generator | None = None,
        seed: int = 0,
        premise_column: str = "premise",
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
        if premise_column not in dataset.column_names:
            raise ValueError(f"no {premise_column!r} column to group by; columns are {dataset.column_names}")
        groups: dict[str, list[int]] = {}
        for index, premise in enumerate(dataset[premise_column]):
            groups.setdefault(premise, []).append(index)
        self.groups = list(groups.values())
        oversized = sum(len(g) > batch_size for g in self.groups)
        if oversized:
            logger.warning(
                "%d premise groups have more than %d rows; each fills a batch of its own", oversized, batch_size
            )

    def _batches(self) -> list[list[int]]:
        generator = torch.Generator().manual_seed(self.seed + self.epoch)
        batches, current = [], []
        for g in torch.randperm(len(self.groups), generator=generator).tolist():
            group = self.groups[g]
            if current and len(current) + len(group) > self.batch_size:
                batches.append(current)
                current = []
            current = current + group
        if current and not (self.drop_last and len(current) < self.batch_size):
            batches.append(current)
        return batches

    def __iter__(self) -> Iterator[list[int]]:
        yield from self._batches()

    def __len__(self) -> int:
        return len(self._batches())
