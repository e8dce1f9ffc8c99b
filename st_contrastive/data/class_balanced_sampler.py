"""Class-balanced batches for tiny labelled pools, where every example counts and classes may have one example."""

from __future__ import annotations

from collections.abc import Iterator

import torch
from datasets import Dataset
from sentence_transformers.base.sampler import DefaultBatchSampler

from st_contrastive.arguments import at_least
from st_contrastive.arguments import seed as seed_rule


class ClassBalancedBatchSampler(DefaultBatchSampler):
    """Every example once per epoch, with the classes interleaved so each batch holds as many classes as it can.

    Each epoch (reseeded by ``seed + epoch``) the examples of each class are shuffled, then taken round-robin over
    the classes in a shuffled class order, and the sequence is cut into batches of ``batch_size``. Unlike
    sentence-transformers' ``GROUP_BY_LABEL`` sampler, nothing is dropped or trimmed: a class with a single
    example is kept (it is a SupCon positive only of its own dropout views), and majority classes are used in
    full. Use ``SentenceTransformerTrainingArguments(batch_sampler=ClassBalancedBatchSampler)``.
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
        column = next((c for c in (valid_label_columns or ["label"]) if c in dataset.column_names), None)
        if column is None:
            raise ValueError(
                f"no label column {valid_label_columns or ['label']} to balance; columns are {dataset.column_names}"
            )
        classes: dict = {}
        for index, label in enumerate(dataset[column]):
            classes.setdefault(label, []).append(index)
        self.classes = list(classes.values())

    def _order(self) -> list[int]:
        generator = torch.Generator().manual_seed(self.seed + self.epoch)
        queues = [
            [members[i] for i in torch.randperm(len(members), generator=generator).tolist()] for members in self.classes
        ]
        queues = [queues[i] for i in torch.randperm(len(queues), generator=generator).tolist()]
        order = []
        for position in range(max(map(len, queues))):
            order.extend(queue[position] for queue in queues if position < len(queue))
        return order

    def __iter__(self) -> Iterator[list[int]]:
        order = self._order()
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            if len(batch) == self.batch_size or not self.drop_last:
                yield batch

    def __len__(self) -> int:
        total = sum(map(len, self.classes))
        return total // self.batch_size if self.drop_last else -(-total // self.batch_size)
