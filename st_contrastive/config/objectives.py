"""The settings of each loss, with their defaults and rules written once: the loss builds its settings from its
arguments (so a bad one is refused with an ``ArgumentError`` naming it) and takes its defaults from here, and a
command checks its options by building the same settings before any model loads. Nothing here imports torch."""

from __future__ import annotations

from dataclasses import dataclass

from st_contrastive.arguments import ArgumentError, at_least, fraction, one_of, positive, require

SIMILARITIES = ("cosine", "dot")


@dataclass(frozen=True)
class DeCLUTRObjective:
    """``contrastive_weight·NT-Xent + mlm_weight·MLM`` at ``temperature`` τ (the paper's 0.05)."""

    temperature: float = 0.05
    contrastive_weight: float = 1.0
    mlm_weight: float = 1.0

    def __post_init__(self) -> None:
        positive("temperature", self.temperature)
        at_least("contrastive_weight", self.contrastive_weight, 0)
        at_least("mlm_weight", self.mlm_weight, 0)
        if self.contrastive_weight == 0 and self.mlm_weight == 0:
            raise ArgumentError("mlm_weight", 0, "and contrastive_weight=0 leave nothing to train: make one positive")


@dataclass(frozen=True)
class Masking:
    """MLM masking: ``mlm_probability`` of the tokens are chosen (BERT's 80/10/10 replacement)."""

    mlm_probability: float = 0.15

    def __post_init__(self) -> None:
        fraction("mlm_probability", self.mlm_probability, one_included=False)


@dataclass(frozen=True)
class SupConObjective:
    """Label-based SupCon (Khosla et al.) at ``temperature`` over ``similarity``."""

    temperature: float = 0.1
    similarity: str = "cosine"

    def __post_init__(self) -> None:
        positive("temperature", self.temperature)
        one_of("similarity", self.similarity, SIMILARITIES)


def _supcon_weight(value) -> None:
    fraction("supcon_weight", value)  # λ: 0 is CE only, 1 SupCon only


def _count_or_all(argument: str, value) -> None:
    ok = value == "all" or (isinstance(value, int) and not isinstance(value, bool) and value >= 1)
    require(argument, value, ok, "must be 'all' or a positive integer")


@dataclass(frozen=True)
class NLISupConObjective:
    """``(1−λ)·CE + λ·SupCon`` on NLI, premise-anchored. λ = 0.3 gave the paper's best STS (§4.4), τ = 1.0 its
    setting; ``positives``/``negatives`` cap each anchor's candidates ("all" or a count). SupCon compares dot
    products of the pooled embeddings: chosen on STS-B and SICK-R dev for an encoder that already embeds sentences
    (recipes/supcon-encoder-defaults). :meth:`paper` gives the paper's settings, for a base trained with MLM only."""

    supcon_weight: float = 0.3
    temperature: float = 1.0
    positives: str | int = "all"
    negatives: str | int = "all"
    similarity: str = "dot"

    def __post_init__(self) -> None:
        _supcon_weight(self.supcon_weight)
        positive("temperature", self.temperature)
        _count_or_all("positives", self.positives)
        _count_or_all("negatives", self.negatives)
        one_of("similarity", self.similarity, SIMILARITIES)

    @classmethod
    def paper(cls, **changes) -> NLISupConObjective:
        """The paper's settings (§4.4: λ 0.3, every positive and negative, τ 1.0, cosine similarity), with
        ``changes``: for a base trained with MLM only, as the paper's BERT was."""
        return cls(**{"similarity": "cosine"} | changes)


@dataclass(frozen=True)
class SCALeObjective:
    """``(1−λ)·CE + λ·SupCon`` over labels, one view per dropout rate: the paper's λ 0.9, τ 0.3 and five rates."""

    supcon_weight: float = 0.9
    temperature: float = 0.3
    dropout_rates: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.4)
    similarity: str = "cosine"

    def __post_init__(self) -> None:
        _supcon_weight(self.supcon_weight)
        positive("temperature", self.temperature)
        require("dropout_rates", self.dropout_rates, len(self.dropout_rates) > 0, "needs at least one rate")
        for rate in self.dropout_rates:
            fraction("dropout_rates", rate, one_included=False)
        one_of("similarity", self.similarity, SIMILARITIES)


@dataclass(frozen=True)
class GradCache:
    """A cached loss embeds ``mini_batch_size`` rows at a time (GradCache): memory of that many rows."""

    mini_batch_size: int = 32

    def __post_init__(self) -> None:
        require(
            "mini_batch_size",
            self.mini_batch_size,
            isinstance(self.mini_batch_size, int) and self.mini_batch_size >= 1,
            "must be a whole number >= 1",
        )


@dataclass(frozen=True)
class Matryoshka:
    """sentence-transformers' ``MatryoshkaLoss`` around a loss: the embedding sizes it trains at
    (``matryoshka_dims``, the model's own first; None or empty: off) and each size's weight in the loss
    (``matryoshka_weights``, in the same order; None: 1 each, as sentence-transformers)."""

    matryoshka_dims: tuple[int, ...] | list[int] | None = None
    matryoshka_weights: tuple[float, ...] | list[float] | None = None

    def __post_init__(self) -> None:
        dims, weights = self.matryoshka_dims or [], self.matryoshka_weights
        for dim in dims:
            at_least("matryoshka_dims", dim, 1)
        if weights is None:
            return
        require(
            "matryoshka_weights",
            weights,
            len(weights) == len(dims),
            f"give one weight per `matryoshka_dims` size ({len(dims)})",
        )
        for weight in weights:
            positive("matryoshka_weights", weight)
