"""The SetFit reference arms (what a sentence-transformers user picks today for few labels), on the labelled sets of
the first objective's arm: ``setfit`` takes the step count of that arm's round and its token limit, everything
else SetFit's default; ``setfit-defaults`` is SetFit as its documentation runs it, 20 pair iterations."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from st_contrastive.extras import require_extra

# SetFit's documented setting and its default before 1.0 (the SetFit paper's). setfit 1.x leaves num_iterations
# unset and draws every pair of the labelled set ("oversampling"): ~40,000 pairs, 2,500 steps, at 225 labels.
SETFIT_PAIR_ITERATIONS = 20

logger = logging.getLogger(__name__)


@dataclass
class SetFitRoundModel:
    """A trained SetFit model with the :class:`~st_contrastive.scale.round_training.RoundModel` calls the loop uses."""

    model: object  # setfit.SetFitModel
    classes: int
    batch_size: int = 64
    steps: int = 0  # optimisation steps of the body
    optimisation_seconds: float = 0.0  # setfit's trainer.train(): pairs, body and head

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.model.model_body.encode(texts, batch_size=self.batch_size, convert_to_numpy=True)

    def proba_of(self, embeddings: np.ndarray) -> np.ndarray:
        """SetFit's logistic-regression head on body embeddings (what ``SetFitModel.predict_proba`` computes)."""
        seen = self.model.model_head.predict_proba(embeddings)
        proba = np.zeros((len(embeddings), self.classes), dtype=seen.dtype)  # classes absent from the labelled set: 0
        proba[:, self.model.model_head.classes_.astype(int)] = seen
        return proba

    def proba(self, texts: list[str], dropout_samples: int | None = None) -> np.ndarray:
        if dropout_samples:
            raise ValueError("the SetFit reference arm has a logistic-regression head: no MC dropout (BALD)")
        return self.proba_of(self.embed(texts))

    def save(self, path: str | Path) -> None:
        self.model.save_pretrained(str(path))


def train_setfit(
    base_model: str,
    texts: list[str],
    labels: list[int],
    label_names: list[str],
    output_dir: str | Path,
    seed: int,
    steps: int | None = None,
    batch_size: int = 16,
    max_seq_length: int | None = None,
) -> SetFitRoundModel:
    """SetFit from ``base_model``: contrastive pairs, then its logistic-regression head.

    ``steps`` and ``max_seq_length`` given: that many body steps of ``batch_size`` pairs over at most that many tokens
    (the ``setfit`` arm). ``steps`` None: SetFit's own settings, :data:`SETFIT_PAIR_ITERATIONS` pairs per labelled
    row for one epoch of batch 16, the model's token limit (the ``setfit-defaults`` arm).
    """
    import time

    from datasets import Dataset

    setfit = require_extra("setfit", "active")
    model = setfit.SetFitModel.from_pretrained(base_model)
    common = {
        "output_dir": str(output_dir),
        "seed": seed,
        "save_strategy": "no",
        "report_to": "none",
        "show_progress_bar": False,
    }
    if steps is None:
        args = setfit.TrainingArguments(num_iterations=SETFIT_PAIR_ITERATIONS, **common)
    else:
        if max_seq_length:
            model.model_body.max_seq_length = min(max_seq_length, model.model_body.max_seq_length or max_seq_length)
        args = setfit.TrainingArguments(batch_size=batch_size, max_steps=steps, **common)
    trainer = setfit.Trainer(model=model, args=args, train_dataset=Dataset.from_dict({"text": texts, "label": labels}))
    start = time.perf_counter()
    if len(set(labels)) == len(labels):
        # SetFit's body learns from pairs of rows that share a label; with none its pair sampler raises IndexError
        # (setfit 1.2.0, sampler.get_positive_pairs). Nothing is there for the body to learn: fit the head alone.
        logger.warning(
            "SetFit: no two of the %d labelled rows share a label, so there is no positive pair to train "
            "its body on; this round fits its head on the base's embeddings",
            len(labels),
        )
        trainer.train_classifier(texts, labels)
        steps = 0
    else:
        trainer.train()
        steps = trainer.st_trainer.state.global_step
    return SetFitRoundModel(model, len(label_names), steps=steps, optimisation_seconds=time.perf_counter() - start)
