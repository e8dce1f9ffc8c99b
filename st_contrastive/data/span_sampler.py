"""DeCLUTR span sampling (Giorgi et al., 2021, §3.2): anchors and nearby positives drawn from one document."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

import numpy as np

from st_contrastive.arguments import at_least, is_number, one_of, require
from st_contrastive.arguments import seed as seed_rule

logger = logging.getLogger(__name__)

STRATEGIES = ("default", "adjacent", "subsuming")
SHORT_DOCUMENTS = ("skip", "error", "shrink")
Strategy = Literal["default", "adjacent", "subsuming"]
ShortDocuments = Literal["skip", "error", "shrink"]


@dataclass(frozen=True)
class Span:
    """Token positions ``[start, end)`` of a document."""

    start: int
    end: int

    def __len__(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class AnchorSpans:
    anchor: Span
    positives: tuple[Span, ...]


def placement(anchor: Span, positive: Span) -> str:
    """How ``positive`` sits against ``anchor``: "adjacent", "subsumed", "overlapping" or "disjoint"."""
    if positive.end == anchor.start or positive.start == anchor.end:
        return "adjacent"
    if anchor.start <= positive.start and positive.end <= anchor.end:
        return "subsumed"
    if positive.start < anchor.end and anchor.start < positive.end:
        return "overlapping"
    return "disjoint"


class SpanSampler:
    """Samples ``num_anchors`` anchor spans per document and ``num_positives`` positive spans per anchor.

    Lengths follow the paper: ``⌊p·(max_length − min_length) + min_length⌋`` with ``p ~ Beta(4, 2)`` for anchors
    (skewed long) and ``p ~ Beta(2, 4)`` for positives (skewed short). A positive starts uniformly in
    ``[anchor.start − length, anchor.end]``, so it overlaps, adjoins or is subsumed by its anchor
    (``strategy="default"``); ``"adjacent"`` and ``"subsuming"`` keep only one kind (the paper's ablation).

    Anchors of one document never overlap and are at least ``min_anchor_gap`` tokens apart. The default gap is
    ``max_length``, as the reference implementation guarantees and the arXiv text states (the ACL text says
    ``2·max_length``): it is the largest gap that a document of ``2·num_anchors·max_length`` tokens (the length
    required) always leaves room for whatever ``num_anchors`` is, and since a positive reaches at most
    ``max_length`` tokens outside its anchor, no positive ever covers a sibling anchor, so the sibling anchors
    stay true hard negatives. Pass ``min_anchor_gap=2 * max_length`` to also keep the positives of different
    anchors apart; documents then need ``(3·num_anchors − 2)·max_length`` tokens (``min_document_length``).

    Documents shorter than ``min_document_length`` tokens are dropped and counted (``short_documents="skip"``,
    the default: the paper trained only on documents of at least ``2·A·ℓmax`` = 2048 tokens), raise an error
    naming the first of them (``"error"``), or get every length scaled down to fit (``"shrink"``, for corpora of
    short documents). Errors and warnings name the settings to change as this class's arguments.
    """

    def __init__(
        self,
        num_anchors: int = 2,
        num_positives: int = 2,
        min_length: int = 32,
        max_length: int = 512,
        anchor_beta: tuple[float, float] = (4.0, 2.0),
        positive_beta: tuple[float, float] = (2.0, 4.0),
        strategy: Strategy = "default",
        min_anchor_gap: int | None = None,
        short_documents: ShortDocuments = "skip",
        seed: int = 0,
    ) -> None:
        at_least("num_anchors", num_anchors, 1)
        at_least("num_positives", num_positives, 1)
        at_least("min_length", min_length, 1)
        require(
            "max_length",
            max_length,
            max_length >= min_length,
            f"must be at least the shortest span length ({min_length})",
        )
        for argument, beta in (("anchor_beta", anchor_beta), ("positive_beta", positive_beta)):
            # Beta(a, b) needs a, b > 0: numpy would fail only when the first span is drawn.
            require(
                argument, beta, len(beta) == 2 and all(is_number(v) and v > 0 for v in beta), "needs two values above 0"
            )
        one_of("strategy", strategy, STRATEGIES)
        if min_anchor_gap is not None:
            at_least("min_anchor_gap", min_anchor_gap, 0)
        one_of("short_documents", short_documents, SHORT_DOCUMENTS)
        seed_rule("seed", seed)
        self.num_anchors = num_anchors
        self.num_positives = num_positives
        self.min_length = min_length
        self.max_length = max_length
        self.anchor_beta = tuple(anchor_beta)
        self.positive_beta = tuple(positive_beta)
        self.strategy = strategy
        self.min_anchor_gap = max_length if min_anchor_gap is None else min_anchor_gap
        self.short_documents = short_documents
        self.seed = seed
        self._rng = np.random.default_rng(seed)

    @property
    def min_document_length(self) -> int:
        """Tokens a document needs at full span lengths: the paper's ``2·A·max_length``, or more when the anchors
        and their gaps need it, ``A·max_length + (A−1)·min_anchor_gap``."""
        anchors_and_gaps = self.num_anchors * self.max_length + (self.num_anchors - 1) * self.min_anchor_gap
        return max(2 * self.num_anchors * self.max_length, anchors_and_gaps)

    @property
    def shortest_document(self) -> int:
        """Tokens a document needs at all: ``min_document_length``, or with ``"shrink"`` enough for 1-token spans."""
        if self.short_documents == "shrink":
            return -(-self.min_document_length // self.max_length)  # ceil: the shrunk max_length is at least 1
        return self.min_document_length

    def lengths_for(self, num_tokens: int) -> tuple[int, int, int]:
        """``(min_length, max_length, min_anchor_gap)`` used for a document of ``num_tokens`` tokens.

        With ``"shrink"`` a short document gets the span lengths and the gap scaled by the same factor, so its
        anchors and gaps still fit exactly as they do in a document of ``min_document_length`` tokens.
        """
        if num_tokens >= self.min_document_length or self.short_documents != "shrink":
            return self.min_length, self.max_length, self.min_anchor_gap
        max_length = self.max_length * num_tokens // self.min_document_length
        gap = self.min_anchor_gap * num_tokens // self.min_document_length
        return min(self.min_length, max_length), max_length, gap

    def is_too_short(self, num_tokens: int) -> bool:
        return num_tokens < self.shortest_document

    @staticmethod
    def setting(name: str, value) -> str:
        """How the reader changes a setting, named as this class's argument."""
        return f"{name}={value!r}"

    def select_documents(self, lengths: list[int], names: list[str] | None = None) -> list[int]:
        """Indices of the documents to train on; drops and counts short ones (``"skip"``), or raises."""
        short = [i for i, n in enumerate(lengths) if self.is_too_short(n)]
        requirement = (
            f"{self.num_anchors} anchors of up to {self.max_length} tokens, at least {self.min_anchor_gap} "
            f"apart, need {self.shortest_document} tokens"
        )
        lower = f"Lower {self.setting('max_length', self.max_length)}"
        if short and self.short_documents != "skip":
            first = short[0]
            name = names[first] if names else f"row {first}"
            raise ValueError(
                f"{len(short)} of {len(lengths)} documents are too short for span sampling; the first is "
                f"{name} with {lengths[first]} tokens, but {requirement}. {lower}, or pass "
                f"{self.setting('short_documents', 'skip')} to drop them, or "
                f"{self.setting('short_documents', 'shrink')} to scale span lengths down per document."
            )
        if short and len(short) == len(lengths):
            raise ValueError(
                f"all {len(lengths)} documents are too short for span sampling: {requirement}. "
                f"{lower}, or pass {self.setting('short_documents', 'shrink')}."
            )
        if short:
            logger.warning(
                "Skipped %d of %d documents shorter than %d tokens (%s); %s keeps them with shorter spans, "
                "%s stops on them.",
                len(short),
                len(lengths),
                self.shortest_document,
                requirement,
                self.setting("short_documents", "shrink"),
                self.setting("short_documents", "error"),
            )
        skipped = set(short)
        return [i for i in range(len(lengths)) if i not in skipped]

    def sample(self, num_tokens: int, rng: np.random.Generator | None = None) -> list[AnchorSpans]:
        """Anchor and positive spans for a document of ``num_tokens`` tokens, anchors in reading order."""
        rng = self._rng if rng is None else rng
        if self.is_too_short(num_tokens):
            raise ValueError(
                f"a document of {num_tokens} tokens is too short: need {self.shortest_document}, or "
                f"{self.setting('short_documents', 'shrink')}"
            )
        min_length, max_length, gap = self.lengths_for(num_tokens)
        anchors = self._sample_anchors(num_tokens, min_length, max_length, gap, rng)
        return [
            AnchorSpans(
                anchor,
                tuple(
                    self._sample_positive(anchor, num_tokens, min_length, max_length, rng)
                    for _ in range(self.num_positives)
                ),
            )
            for anchor in anchors
        ]

    def _length(self, beta: tuple[float, float], min_length: int, max_length: int, rng, size=None):
        p = rng.beta(*beta, size=size)
        return np.floor(p * (max_length - min_length) + min_length).astype(int)

    def _sample_anchors(self, num_tokens, min_length, max_length, gap, rng) -> list[Span]:
        lengths = self._length(self.anchor_beta, min_length, max_length, rng, size=self.num_anchors)
        slack = num_tokens - int(lengths.sum()) - (self.num_anchors - 1) * gap
        if slack < 0:
            raise ValueError(
                f"a document of {num_tokens} tokens cannot hold {self.num_anchors} anchors of lengths "
                f"{lengths.tolist()} at least {gap} tokens apart; lower min_anchor_gap or max_length"
            )
        # Sorted uniform offsets into the free tokens place the anchors in order, disjoint and gap apart.
        offsets = np.sort(rng.integers(0, slack + 1, size=self.num_anchors))
        spans, used = [], 0
        for k, (offset, length) in enumerate(zip(offsets, lengths)):
            start = int(offset) + used + k * gap
            spans.append(Span(start, start + int(length)))
            used += int(length)
        return spans

    def _sample_positive(self, anchor: Span, num_tokens, min_length, max_length, rng) -> Span:
        length = int(self._length(self.positive_beta, min_length, max_length, rng))
        if self.strategy == "subsuming":
            length = min(length, len(anchor))
            start = int(rng.integers(anchor.start, anchor.end - length + 1))
        elif self.strategy == "adjacent":
            room_before, room_after = anchor.start, num_tokens - anchor.end
            length = min(length, max(room_before, room_after))
            sides = [s for s, room in (("before", room_before), ("after", room_after)) if room >= length]
            side = sides[int(rng.integers(len(sides)))]
            start = anchor.start - length if side == "before" else anchor.end
        else:
            low = max(0, anchor.start - length)
            high = min(anchor.end, num_tokens - length)
            start = int(rng.integers(low, high + 1))
        return Span(start, start + length)
