"""Turns a batch of tokenized documents into DeCLUTR anchor and positive spans, fresh at every batch."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import torch
from datasets import Dataset

from st_contrastive.arguments import seed
from st_contrastive.config.objectives import Masking
from st_contrastive.data.span_sampler import SpanSampler
from st_contrastive.models.masking import IGNORE_INDEX, mask_tokens


@dataclass
class DeCLUTRDataCollator:
    """Data collator for ``SentenceTransformerTrainer`` whose dataset rows are documents.

    Each row needs ``token_ids`` (see :func:`st_contrastive.data.prepare_declutr_dataset`). Every call samples
    new spans, so each epoch sees different spans. The output holds two inputs the trainer hands to the loss:
    ``anchor_*`` (``N·A`` rows, masked for MLM with ``anchor_mlm_labels`` holding the original tokens) and
    ``positive_*`` (``N·A·P`` rows, the ``P`` positives of anchor ``i`` at rows ``i·P … i·P+P−1``).

    The spans and masks of each document are a pure function of ``(seed, epoch, the document)`` (copies of a
    document within one batch are numbered, so they draw differently; copies in different batches of one epoch
    draw alike, so repeat a small corpus with more epochs rather than by copying it): a run resumed
    from a checkpoint draws what the uninterrupted run drew (skipped batches are never collated), and the result
    depends neither on the number of DataLoader workers nor on how a global batch is split over DDP ranks (two
    ranks of B/2 documents draw what one process of B draws), and evaluation batches (:meth:`for_evaluation`)
    draw the same spans and masks at every evaluation without moving the training draws. :class:`~st_contrastive.training.ContrastiveTrainer` calls :meth:`set_epoch` every epoch
    (persistent DataLoader workers see it too) and :meth:`check_model` before training.
    """

    tokenizer: Any
    span_sampler: SpanSampler = field(default_factory=SpanSampler)
    mlm_probability: float = Masking.mlm_probability
    seed: int = 0
    evaluation: bool = False
    valid_label_columns: list[str] = field(default_factory=list)  # read by the trainer; documents have no labels

    def __post_init__(self) -> None:
        Masking(self.mlm_probability)  # refuses a bad probability, naming it
        seed("seed", self.seed)
        name = type(self.tokenizer).__name__
        if self.tokenizer.pad_token_id is None:
            raise ValueError(
                f"the tokenizer {name} has no pad token, so spans of different lengths cannot share a "
                "batch; give it one first, e.g. tokenizer.pad_token = tokenizer.eos_token"
            )
        if self.mlm_probability > 0 and self.tokenizer.mask_token_id is None:
            raise ValueError(
                f"the tokenizer {name} has no mask token, so MLM is impossible; "
                "pass mlm_probability=0 (and mlm_weight=0 to DeCLUTRLoss) for contrastive-only training"
            )
        self._prefix, self._suffix = special_token_template(self.tokenizer)
        # In shared memory, so that persistent DataLoader workers see the epoch the trainer sets.
        self._epoch = torch.zeros(1, dtype=torch.long).share_memory_()

    @property
    def epoch(self) -> int:
        return int(self._epoch[0])

    def set_epoch(self, epoch: int) -> None:
        self._epoch[0] = epoch

    def for_evaluation(self) -> DeCLUTRDataCollator:
        """The same collator for evaluation batches: fixed spans and masks, whatever the training epoch."""
        return replace(self, evaluation=True)

    def check_model(self, model) -> None:
        """Raise now, not mid-training, when the longest span with its special tokens does not fit ``model``."""
        limit, why = input_token_limit(model)
        longest = self.span_sampler.max_length + len(self._prefix) + len(self._suffix)
        if longest > limit:
            raise ValueError(
                f"spans of up to {self.span_sampler.max_length} tokens plus {longest - self.span_sampler.max_length} "
                f"special tokens do not fit the model, which takes at most {limit} tokens ({why}): lower the span "
                f"sampler's max_length={self.span_sampler.max_length} to {limit - longest + self.span_sampler.max_length} "
                "or less"
            )

    def generator_for(self, document: int, repeat: int = 0) -> np.random.Generator:
        """The random generator of one document, keyed by the checksum of its tokens (see the class docstring);
        ``repeat`` counts earlier copies of the same document in the batch, so that copies draw different spans."""
        epoch = -1 if self.evaluation else self.epoch
        return np.random.default_rng([self.seed, epoch + 1, document, repeat])

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        anchors, labels, positives = [], [], []
        seen: dict[int, int] = {}
        for row in features:
            token_ids = row["token_ids"]
            document = zlib.crc32(np.asarray(token_ids, dtype=np.int64).tobytes())  # once per document
            seen[document] = seen.get(document, -1) + 1
            rng = self.generator_for(document, seen[document])
            document_anchors = []
            for spans in self.span_sampler.sample(len(token_ids), rng):
                document_anchors.append(token_ids[spans.anchor.start : spans.anchor.end])
                positives.extend(
                    self._prefix + list(token_ids[p.start : p.end]) + self._suffix for p in spans.positives
                )
            masked, targets = self._mask_document(document_anchors, rng)
            anchors.extend(masked)
            labels.extend(targets)
        batch = {f"anchor_{k}": v for k, v in self._pad(anchors).items()}
        batch.update({f"positive_{k}": v for k, v in self._pad(positives).items()})
        if self.mlm_probability > 0:
            width = batch["anchor_input_ids"].shape[1]
            fill = [[IGNORE_INDEX] * (width - len(row)) for row in labels]
            left = self.tokenizer.padding_side == "left"
            batch["anchor_mlm_labels"] = torch.tensor([f + row if left else row + f for row, f in zip(labels, fill)])
        return batch

    def _mask_document(
        self, spans: list[list[int]], rng: np.random.Generator
    ) -> tuple[list[list[int]], list[list[int]]]:
        """One document's anchors with special tokens, masked for MLM from its own generator, and their labels.

        Masked per document, before the batch is padded, so the masks do not depend on the other documents of
        the batch (nor on how long they are).
        """
        sequences = [self._prefix + list(span) + self._suffix for span in spans]
        if self.mlm_probability <= 0:
            return sequences, []
        padded = self.tokenizer.pad({"input_ids": sequences}, padding_side="right", return_tensors="pt")["input_ids"]
        generator = torch.Generator().manual_seed(int(rng.integers(2**63 - 1)))
        masked, labels = mask_tokens(padded, self.tokenizer, self.mlm_probability, generator)
        return (
            [row[: len(s)].tolist() for row, s in zip(masked, sequences)],
            [row[: len(s)].tolist() for row, s in zip(labels, sequences)],
        )

    def _pad(self, sequences: list[list[int]]) -> dict[str, torch.Tensor]:
        return dict(self.tokenizer.pad({"input_ids": sequences}, return_tensors="pt"))


def input_token_limit(model) -> tuple[int, str]:
    """The most tokens one input of a SentenceTransformer may have, and why.

    The smaller of the Transformer module's ``max_seq_length`` and the positions its embeddings can index:
    RoBERTa-family models number positions from ``padding_idx + 1``, so their 514 position embeddings take 512
    tokens.
    """
    transformer = model[0]
    limits = []
    if getattr(transformer, "max_seq_length", None):
        limits.append((transformer.max_seq_length, f"max_seq_length {transformer.max_seq_length}"))
    positions = getattr(getattr(transformer.auto_model, "embeddings", None), "position_embeddings", None)
    if isinstance(positions, torch.nn.Embedding):
        start = 0 if positions.padding_idx is None else positions.padding_idx + 1
        why = f"{positions.num_embeddings} position embeddings" + (f", numbered from {start}" if start else "")
        limits.append((positions.num_embeddings - start, why))
    return min(limits) if limits else (10**9, "no limit found")


def longest_span(model) -> tuple[int, str]:
    """The most tokens a span may have in ``model``, once the special tokens its tokenizer adds around each input are
    counted (:func:`input_token_limit` less :func:`special_token_template`), and why. The commands and the recipes fit
    their span lengths to a model with it."""
    limit, why = input_token_limit(model)
    specials = sum(map(len, special_token_template(model.tokenizer)))
    return limit - specials, f"{why}, less {specials} special tokens"


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
    tokenized = tokenized.select_columns(["token_ids"])
    if len(keep) < len(tokenized):
        # Copied into a table of its own: a select() is an indices mapping over the whole table, and
        # sentence-transformers' model card keeps a dataset's string columns (none here) before reading sample rows;
        # datasets then leaves a table of zero rows behind that mapping (ZeroDivisionError: integer modulo by zero).
        tokenized = tokenized.select(keep).flatten_indices()
    return tokenized


def _document_names(documents: Dataset) -> list[str]:
    for column in ("id", "title"):
        if column in documents.column_names:
            return [f"row {i} ({column}={value!r})" for i, value in enumerate(documents[column])]
    return [f"row {i}" for i in range(len(documents))]
