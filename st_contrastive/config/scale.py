"""SCALe's settings: how each active-learning round trains, and the acquisition functions and objectives a round can
use. No torch, so a command builds its parser and checks its arguments before anything heavy loads."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from st_contrastive.arguments import at_least, fraction, positive
from st_contrastive.config.objectives import SCALeObjective
from st_contrastive.config.training import TrainSettings

OBJECTIVES = ("supcon-ce", "ce", "siamese")
ACQUISITIONS = ("random", "entropy", "least-confidence", "margin", "bald", "coreset", "balanced-entropy", "kmeans")

# Fixed values, no longer options; each comment says why that value.
# The least a round trains where its classes' floor is lower: the default since 0a2e4cd (23 a class binds first).
MIN_STEPS = 10
# SetFit's: level with 8 a step on TREC-6's and SST-2's dev splits, in half the pair steps (7e4a3e3).
PAIRS_PER_STEP = 16
# Chosen on both dev splits against continuing from the second round on (9f8f8b8).
WARM_START_MIN_PER_CLASS = 10


def _help(text: str, **more) -> dict:
    return {"help": text, **more}


@dataclass
class RoundTraining:
    """How each round trains. The paper's settings where it gives them (batch 16, lr 2e-5, λ 0.9, τ 0.3, 10 siamese
    repeats); the rest were chosen on dev splits (recipes/scale-against-setfit): a round continues from the last round's model
    once that round trained on 10 labelled rows a class, and before that starts from the base (a model fit to a
    handful of rows per class was a worse start on SST-2's dev split, a better one after); SCALe encodes one view, the
    encoder's own dropout (0.1), instead of the paper's five, and spends what a second view cost on steps: a round
    that continues trains 15 epochs, one from the base 45 (its 5 % round had fewer steps than SetFit's pairs on the
    same rows), each at least 23 steps for each of the dataset's classes (TREC-6's six classes gained from 90 steps
    in the first rounds), 1.5 times the two views' steps, which was ahead of them over both dev splits; the first half
    of a round's steps train SetFit's pairs of labelled rows (ahead on three of TREC-6's and SST-2's four dev splits
    and on their mean, and on SST-5's), at SetFit's 16 pairs a step (level with 8 on their mean, in fewer steps).
    ``head_learning_rate`` is ours (SetFit's head default): at 2e-5 a new linear head barely moves in the few dozen
    steps a small pool gives (the head's learning rate is among the choices of recipes/scale-against-setfit). λ, τ and the dropout rates follow
    :class:`~st_contrastive.config.objectives.SCALeObjective`'s rules; the optimiser's follow
    :class:`~st_contrastive.config.training.TrainSettings`'."""

    epochs: float = field(
        default=15.0, metadata=_help("passes over the labelled rows in a round that continues from the last round's")
    )
    from_base_epochs: float = field(
        default=45.0,
        metadata=_help(
            "passes over the labelled rows in a round that starts from the base model, not the last round's"
        ),
    )
    min_steps_per_class: int = field(
        default=23, metadata=_help("at least this many steps a round for each of the dataset's classes")
    )
    batch_size: int = field(default=16, metadata=_help("rows per batch"))
    learning_rate: float = field(default=2e-5, metadata=_help("encoder learning rate (AdamW)"))
    head_learning_rate: float = field(default=1e-2, metadata=_help("learning rate of the softmax head"))
    supcon_weight: float = field(default=SCALeObjective.supcon_weight, metadata=_help("λ of supcon-ce"))
    temperature: float = field(default=SCALeObjective.temperature, metadata=_help("τ of supcon-ce"))
    dropout_rates: list[float] = field(
        default_factory=lambda: [0.1],
        metadata=_help("one view per rate (supcon-ce; the paper: 0.0 0.1 0.2 0.3 0.4)"),
    )
    siamese_repeats: int = field(default=10, metadata=_help("pairs per sentence and label relation (siamese)"))
    pair_share: float = field(
        default=0.5,
        metadata=_help(
            "share of a round's steps spent first on SetFit's pairs of labelled rows (sentence-transformers' "
            "CosineSimilarityLoss, cosine 1 for the same label, 0 for another; the texts of those steps, "
            f"{PAIRS_PER_STEP} pairs a step), the rest on the objective (supcon-ce, ce); 0: none"
        ),
    )
    warm_start: bool = field(
        default=True,
        metadata=_help(
            "start a round from the previous round's model (its encoder, and its softmax head for supcon-ce and ce) "
            f"once that round trained on {WARM_START_MIN_PER_CLASS} labelled rows a class of the dataset, and before "
            "that from the base model; off: every round from the base model, as the paper does"
        ),
    )
    max_seq_length: int = field(default=128, metadata=_help("tokens per text"))

    def __post_init__(self) -> None:
        TrainSettings(batch_size=self.batch_size, learning_rate=self.learning_rate, epochs=self.epochs)
        positive("from_base_epochs", self.from_base_epochs)
        at_least("min_steps_per_class", self.min_steps_per_class, 0)
        positive("head_learning_rate", self.head_learning_rate)
        SCALeObjective(self.supcon_weight, self.temperature, tuple(self.dropout_rates))
        at_least("siamese_repeats", self.siamese_repeats, 1)
        fraction("pair_share", self.pair_share, one_included=False)
        at_least("max_seq_length", self.max_seq_length, 1)

    def continues_from(self, last_labelled: int, classes: int) -> bool:
        """Whether a round starts from the model of a last round that trained on ``last_labelled`` rows of a dataset
        with ``classes`` labels (:data:`WARM_START_MIN_PER_CLASS` a class at least), rather than from the base."""
        return self.warm_start and last_labelled >= WARM_START_MIN_PER_CLASS * classes

    def epochs_of(self, from_base: bool) -> float:
        """Passes over the labelled rows of a round that starts from the base model or from the last round's."""
        return self.from_base_epochs if from_base else self.epochs

    def least_steps(self, classes: int) -> int:
        """The fewest steps of a round on a dataset with ``classes`` labels: :attr:`min_steps_per_class` a class,
        and :data:`MIN_STEPS` at least."""
        return max(MIN_STEPS, self.min_steps_per_class * classes)

    def pair_budget(self, steps: int) -> int:
        """Of a round's ``steps``, those given to pairs before the objective's (:attr:`pair_share`); at least one is
        left to the objective."""
        return min(steps - 1, round(self.pair_share * steps))

    def pair_steps(self, steps: int) -> int:
        """The pair phase's optimisation steps in a round of ``steps``: the texts of :meth:`pair_budget`'s steps
        (``batch_size`` a step), two per pair, :data:`PAIRS_PER_STEP` pairs a step."""
        return math.ceil(self.pair_budget(steps) * self.batch_size / (2 * PAIRS_PER_STEP))
