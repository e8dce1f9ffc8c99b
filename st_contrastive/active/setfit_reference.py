"""The reference arm: SetFit (what a sentence-transformers user picks today for few labels) on the same labelled
sets, with SetFit's own default settings except the step count, which every arm shares (``round_steps``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass
class SetFitRoundModel:
    """A trained SetFit model with the :class:`~st_contrastive.active.objectives.RoundModel` calls the loop uses."""

    model: object  # setfit.SetFitModel
    classes: int
    batch_size: int = 64

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


def train_setfit(base_model: str, texts: list[str], labels: list[int], label_names: list[str], steps: int,
                 batch_size: int, output_dir: str | Path, seed: int) -> SetFitRoundModel:
    """SetFit from ``base_model`` (contrastive pairs + logistic-regression head), ``steps`` body steps."""
    from datasets import Dataset
    from setfit import SetFitModel, Trainer, TrainingArguments

    model = SetFitModel.from_pretrained(base_model)
    args = TrainingArguments(output_dir=str(output_dir), batch_size=batch_size, max_steps=steps, seed=seed,
                             save_strategy="no", report_to="none", show_progress_bar=False)
    trainer = Trainer(model=model, args=args, train_dataset=Dataset.from_dict({"text": texts, "label": labels}))
    trainer.train()
    return SetFitRoundModel(model, len(label_names))
