"""One active-learning round's training: SCALe (SupCon + CE), CE only, or siamese cosine pre-training + LR; and the
floor they must clear, logistic regression on the frozen base.

Each round continues from the model the round before saved, its encoder and its head, once that round trained on
enough labelled rows a class (``RoundTraining.warm_start``, the default, chosen on dev splits), or starts again from
the base model (without it, as the paper and its baseline do). All objectives take the same number of optimisation
steps of ``batch_size`` rows, :func:`round_steps`, unless the loop gives a round more (``equal_compute``: as long as
SetFit at its defaults took). SCALe and CE can spend the first share of those steps on SetFit's pairs
(``RoundTraining.pair_share``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from datasets import Dataset
from sentence_transformers import SentenceTransformer
from sentence_transformers.sentence_transformer.modules import Normalize
from sentence_transformers.util import batch_to_device

from st_contrastive.arguments import ArgumentError
from st_contrastive.config.scale import OBJECTIVES, PAIRS_PER_STEP, RoundTraining
from st_contrastive.models.heads.label_classifier import LabelClassifier


def round_steps(labelled: int, classes: int, training: RoundTraining, from_base: bool = True) -> int:
    """Optimisation steps of a round with ``labelled`` rows of a dataset with ``classes`` labels, from the base model
    or from the last round's: its epochs (:meth:`RoundTraining.epochs_of`), at least
    :meth:`RoundTraining.least_steps`."""
    epochs = math.ceil(training.epochs_of(from_base) * math.ceil(labelled / training.batch_size))
    return max(training.least_steps(classes), epochs)


@dataclass
class RoundModel:
    """A trained round: the encoder (Transformer + Pooling) and its :class:`LabelClassifier` head."""

    encoder: SentenceTransformer
    classifier: LabelClassifier
    batch_size: int = 64
    steps: int = 0  # optimisation steps of the encoder
    optimisation_seconds: float = 0.0  # the trainer's loop alone: no model loading, no head fit

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.encoder.encode(texts, batch_size=self.batch_size, convert_to_numpy=True)

    def proba_of(self, embeddings: np.ndarray) -> np.ndarray:
        """Class probabilities of embeddings from :meth:`embed`, ``(n, classes)``."""
        return self.classifier.predict_proba(embeddings)

    def proba(self, texts: list[str], dropout_samples: int | None = None) -> np.ndarray:
        """``(n, classes)``; with ``dropout_samples`` (BALD's MC dropout) ``(n, samples, classes)``."""
        if not dropout_samples:
            return self.proba_of(self.embed(texts))
        return np.stack(
            [self.classifier.predict_proba(self._dropout_embeddings(texts)) for _ in range(dropout_samples)], axis=1
        )

    @torch.no_grad()
    def _dropout_embeddings(self, texts: list[str]) -> torch.Tensor:
        self.encoder.train()  # encode() would switch dropout off
        try:
            return torch.cat(
                [
                    self.encoder(
                        batch_to_device(
                            self.encoder.preprocess(texts[start : start + self.batch_size]), self.encoder.device
                        )
                    )["sentence_embedding"]
                    for start in range(0, len(texts), self.batch_size)
                ]
            )
        finally:
            self.encoder.eval()

    def save(self, path: str | Path) -> None:
        """A regular SentenceTransformer checkpoint, with the head in its ``classifier/`` folder."""
        self.encoder.save(str(path))
        self.classifier.save(str(Path(path) / "classifier"))

    @classmethod
    def load(cls, path: str | Path) -> RoundModel:
        """A round's model as :meth:`save` wrote it."""
        return cls(SentenceTransformer(str(path)), LabelClassifier.load(str(Path(path) / "classifier")).eval())


def load_encoder(base_model: str, max_seq_length: int) -> SentenceTransformer:
    """The base model as Transformer + Pooling: a final Normalize would hand the softmax head unit vectors."""
    model = SentenceTransformer(base_model)
    if isinstance(model[-1], Normalize):
        model = SentenceTransformer(modules=list(model)[:-1])
    model.max_seq_length = min(max_seq_length, model.max_seq_length or max_seq_length)
    return model


def train_round(
    objective: str,
    base_model: str,
    texts: list[str],
    labels: list[int],
    label_names: list[str],
    training: RoundTraining,
    output_dir: str | Path,
    seed: int,
    steps: int | None = None,
    warm_from: str | Path | None = None,
) -> RoundModel:
    """Train ``objective`` from ``base_model`` on the labelled rows for ``steps`` (default :func:`round_steps`) and
    return the round's model. ``warm_from`` (``RoundTraining.warm_start``): a saved round model to continue from
    instead, its encoder and its head."""
    from st_contrastive.data.class_balanced_sampler import ClassBalancedBatchSampler
    from st_contrastive.losses.scale import SCALeLoss
    from st_contrastive.training import TrainSettings, train

    if objective not in OBJECTIVES:
        raise ArgumentError("objective", objective, f"choose one of {', '.join(OBJECTIVES)}")
    steps = steps or round_steps(len(texts), len(label_names), training)
    pair_budget = training.pair_budget(steps) if objective != "siamese" and len(texts) > 1 else 0  # needs a partner
    torch.manual_seed(seed)
    encoder = load_encoder(str(warm_from or base_model), training.max_seq_length)
    settings = TrainSettings(
        output_dir=str(output_dir),
        batch_size=training.batch_size,
        max_steps=steps - pair_budget,
        learning_rate=training.learning_rate,
        seed=seed,
        learning_rate_mapping={"classifier": training.head_learning_rate},
    )
    if objective == "siamese":
        return _siamese(encoder, texts, labels, label_names, training, settings, seed)
    pair_steps = training.pair_steps(steps) if pair_budget else 0
    pairs = _pair_phase(encoder, texts, labels, pair_steps, settings, seed) if pair_steps else None
    head = Path(warm_from or "", "classifier")
    classifier = (
        LabelClassifier.load(str(head))
        if warm_from and head.is_dir()
        else LabelClassifier(encoder.get_embedding_dimension(), label_names)
    )
    loss = SCALeLoss(
        encoder,
        classifier.to(encoder.device),
        supcon_weight=training.supcon_weight if objective == "supcon-ce" else 0.0,
        temperature=training.temperature,
        dropout_rates=training.dropout_rates,
    )
    result = train(
        encoder,
        loss,
        Dataset.from_dict({"text": texts, "label": labels}),
        settings,
        batch_sampler=ClassBalancedBatchSampler,
    )
    encoder.eval()
    model = RoundModel(encoder, loss.classifier.eval())
    model.steps = result.steps + (pairs.steps if pairs else 0)
    model.optimisation_seconds = result.seconds + (pairs.seconds if pairs else 0.0)
    return model


def siamese_pairs(
    labels: list[int], repeats: int, seed: int, other_label: float = -1.0
) -> tuple[list[int], list[int], list[float]]:
    """The paper's §3.2 pairs: per sentence and repeat, one same-label partner (label 1; none when the sentence is
    alone in its class) and one other-label partner (label ``other_label``, the paper's −1; SetFit's 0; none when
    every row has one label)."""
    rng = np.random.default_rng(seed)
    labels = np.asarray(labels)
    first, second, targets = [], [], []
    for _ in range(repeats):
        for i, label in enumerate(labels):
            same = np.flatnonzero((labels == label) & (np.arange(len(labels)) != i))
            other = np.flatnonzero(labels != label)
            for partners, target in ((same, 1.0), (other, -1.0)):
                if len(partners):
                    first.append(i)
                    second.append(int(rng.choice(partners)))
                    targets.append(target if target > 0 else other_label)
    return first, second, targets


def pair_dataset(texts: list[str], labels: list[int], repeats: int, seed: int, other_label: float = -1.0) -> Dataset:
    """:func:`siamese_pairs` as the texts sentence-transformers' pair losses read: sentence1, sentence2, label."""
    first, second, targets = siamese_pairs(labels, repeats, seed, other_label)
    return Dataset.from_dict(
        {"sentence1": [texts[i] for i in first], "sentence2": [texts[i] for i in second], "label": targets}
    )


def _pair_phase(encoder, texts, labels, steps, settings, seed):
    """A round's first ``steps`` (:meth:`RoundTraining.pair_steps`): SetFit's pairs (cosine 1 for the same label, 0
    for another) under sentence-transformers' CosineSimilarityLoss, as SetFit trains its body, with enough pairs that
    no step sees one twice; ``settings`` are the objective's, but for :data:`PAIRS_PER_STEP` pairs a step and no
    head."""
    from dataclasses import replace

    from sentence_transformers.sentence_transformer.losses import CosineSimilarityLoss

    from st_contrastive.training import train

    pairs = pair_dataset(texts, labels, math.ceil(steps * PAIRS_PER_STEP / (2 * len(labels))), seed, other_label=0.0)
    phase = replace(
        settings,
        output_dir=str(Path(settings.output_dir, "pairs")),
        batch_size=PAIRS_PER_STEP,
        max_steps=steps,
        learning_rate_mapping=None,  # this loss has no head
    )
    return train(encoder, CosineSimilarityLoss(encoder), pairs, phase)


def _siamese(encoder, texts, labels, label_names, training, settings, seed) -> RoundModel:
    """‖label − cos(u, v)‖² is sentence-transformers' CosineSimilarityLoss; then logistic regression on the frozen
    encoder (:func:`with_logistic_regression`)."""
    from sentence_transformers.sentence_transformer.losses import CosineSimilarityLoss

    from st_contrastive.training import train

    if len(set(labels)) < 2:
        raise ValueError("the siamese objective needs two labels among the labelled rows; raise `initial`")
    pairs = pair_dataset(texts, labels, training.siamese_repeats, seed)
    settings.learning_rate_mapping = None  # this loss has no head
    result = train(encoder, CosineSimilarityLoss(encoder), pairs, settings)
    model = with_logistic_regression(encoder, texts, labels, label_names)
    model.steps, model.optimisation_seconds = result.steps, result.seconds
    return model


def with_logistic_regression(
    encoder: SentenceTransformer, texts: list[str], labels: list[int], label_names: list[str]
) -> RoundModel:
    """scikit-learn's ``LogisticRegression`` (its defaults, C=1; iterations raised until it converges) on the
    encoder's embeddings of the labelled rows, turned into the :class:`LabelClassifier` head the others save."""
    from sklearn.linear_model import LogisticRegression

    encoder.eval()
    embeddings = encoder.encode(texts, batch_size=64, convert_to_numpy=True)
    estimator = LogisticRegression(max_iter=1000).fit(embeddings, labels)
    return RoundModel(encoder, LabelClassifier.from_logistic_regression(estimator, label_names).eval())


def frozen_logistic_regression(
    base_model: str, texts: list[str], labels: list[int], label_names: list[str], training: RoundTraining
) -> RoundModel:
    """The floor every arm must clear: logistic regression on the base model, which is not trained at all.

    The encoder is the one the objectives start from (:func:`load_encoder`: no final Normalize, ``max_seq_length``
    tokens), so this is the siamese objective with zero steps. Logistic regression reads the pooled embeddings: on unit
    vectors its default C=1 underfits.
    """
    if len(set(labels)) < 2:
        raise ValueError("logistic regression needs two labels among the labelled rows; raise `initial`")
    return with_logistic_regression(load_encoder(base_model, training.max_seq_length), texts, labels, label_names)
