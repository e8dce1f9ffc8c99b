"""Turns a batch of tokenized documents into DeCLUTR anchor and positive spans, fresh at every batch."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from datasets import Dataset

from st_contrastive.data.span_sampler import SpanSampler
from st_contrastive.models.masked_lm_head import mask_tokens


@dataclass
class DeCLUTRDataCollator:
    """Data collator for ``SentenceTransformerTrainer`` whose dataset rows are documents.

    Each row needs ``token_ids`` (see :func:`st_contrastive.data.prepare_declutr_dataset`). Every call samples
    new spans, so each epoch sees different spans. The output holds two inputs the trainer hands to the loss:
    ``anchor_*`` (``N·A`` rows, masked for MLM with ``anchor_mlm_labels`` holding the original tokens) and
    ``positive_*`` (``N·A·P`` rows, the ``P`` positives of anchor ``i`` at rows ``i·P … i·P+P−1``). The loss
    restores the unmasked anchors whenever it is not training with MLM.

    Randomness comes from a ``numpy.random.Generator`` seeded by ``(seed, epoch, worker id)``; the
    trainer of this package calls :meth:`set_epoch` at every epoch.
    """

    tokenizer: Any
    span_sampler: SpanSampler = field(default_factory=SpanSampler)
    mlm_probability: float = 0.15
    seed: int = 0
    epoch: int = 0
    valid_label_columns: list[str] = field(default_factory=list)  # read by the trainer; documents have no labels
    _rng_key: tuple | None = field(default=None, init=False, repr=False)
    _rng: np.random.Generator | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.mlm_probability > 0 and self.tokenizer.mask_token_id is None:
            raise ValueError(
                f"the tokenizer {type(self.tokenizer).__name__} has no mask token, so MLM is impossible; "
                "pass mlm_probability=0 (and mlm_weight=0 to DeCLUTRLoss) for contrastive-only training"
            )
        self._with_token_types = "token_type_ids" in self.tokenizer.model_input_names
        self._prefix, self._suffix = special_token_template(self.tokenizer)

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    @property
    def rng(self) -> np.random.Generator:
        info = torch.utils.data.get_worker_info()
        key = (self.seed, self.epoch, 0 if info is None else info.id + 1)  # 0: the main process
        if key != self._rng_key:
            self._rng_key, self._rng = key, np.random.default_rng(key)
        return self._rng

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        rng = self.rng
        anchors, positives = [], []
        for row in features:
            token_ids = row["token_ids"]
            for spans in self.span_sampler.sample(len(token_ids), rng):
                anchors.append(token_ids[spans.anchor.start : spans.anchor.end])
                positives.extend(token_ids[p.start : p.end] for p in spans.positives)
        batch = {f"anchor_{k}": v for k, v in self._pad(anchors).items()}
        batch.update({f"positive_{k}": v for k, v in self._pad(positives).items()})
        if self.mlm_probability > 0:
            batch["anchor_input_ids"], batch["anchor_mlm_labels"] = self.mask_tokens(batch["anchor_input_ids"], rng)
        return batch

    def _pad(self, spans: list[list[int]]) -> dict[str, torch.Tensor]:
        sequences = [self._prefix + list(span) + self._suffix for span in spans]
        longest = max(map(len, sequences))
        input_ids = torch.full((len(sequences), longest), self.tokenizer.pad_token_id, dtype=torch.long)
        attention_mask = torch.zeros((len(sequences), longest), dtype=torch.long)
        for i, sequence in enumerate(sequences):
            input_ids[i, : len(sequence)] = torch.tensor(sequence)
            attention_mask[i, : len(sequence)] = 1
        padded = {"input_ids": input_ids, "attention_mask": attention_mask}
        if self._with_token_types:
            padded["token_type_ids"] = torch.zeros_like(input_ids)
        return padded

    def mask_tokens(self, input_ids: torch.Tensor, rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        generator = torch.Generator().manual_seed(int(rng.integers(2**63 - 1)))
        return mask_tokens(input_ids, self.tokenizer, self.mlm_probability, generator)


def special_token_template(tokenizer) -> tuple[list[int], list[int]]:
    """The special tokens the tokenizer puts before and after one sequence (e.g. [CLS] … [SEP], <s> … </s>)."""
    plain = tokenizer("a", add_special_tokens=False)["input_ids"]
    full = tokenizer("a", add_special_tokens=True)["input_ids"]
    for start in range(len(full) - len(plain) + 1):
        if full[start : start + len(plain)] == plain:
            return full[:start], full[start + len(plain) :]
    raise ValueError(f"cannot find where {type(tokenizer).__name__} puts its special tokens")


def prepare_declutr_dataset(documents: Dataset, tokenizer, span_sampler: SpanSampler) -> Dataset:
    """Tokenize documents once and keep those the sampler can use (error, skip or shrink for short ones)."""
    from st_contrastive.data.documents import tokenize_documents

    tokenized = tokenize_documents(documents, tokenizer)
    lengths = [len(ids) for ids in tokenized["token_ids"]]
    names = _document_names(tokenized)
    keep = span_sampler.select_documents(lengths, names)
    if len(keep) < len(tokenized):
        tokenized = tokenized.select(keep)
    return tokenized.select_columns(["token_ids"])


def _document_names(documents: Dataset) -> list[str]:
    for column in ("id", "title"):
        if column in documents.column_names:
            return [f"row {i} ({column}={value!r})" for i, value in enumerate(documents[column])]
    return [f"row {i}" for i in range(len(documents))]
