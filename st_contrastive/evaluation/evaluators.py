"""Evaluators for ``SentenceTransformerTrainer(evaluator=...)``: transfer tasks, plus a re-export for STS.

STS needs no new class: :func:`st_contrastive.evaluation.sts.sts_evaluator` returns sentence-transformers' own
``EmbeddingSimilarityEvaluator`` on the shared STS-B / SICK-R files. Metrics follow ST's convention: fractions
in 0-1 (reports and the CLI print x 100), keys prefixed with the evaluator name, e.g. ``mr_accuracy``.
Combine several with ``SequentialEvaluator([sts_evaluator("stsb", "dev"), TransferEvaluator("sst2")])``.
"""

from __future__ import annotations

import csv
import os

from sentence_transformers.base.evaluation import BaseEvaluator

from st_contrastive.config.evaluation import SENTEVAL, TransferProtocol
from st_contrastive.evaluation.embedding_cache import EmbeddingCache
from st_contrastive.evaluation.sts import sts_evaluator
from st_contrastive.evaluation.transfer import load_transfer, transfer_scores

__all__ = ["TransferEvaluator", "sts_evaluator"]


class TransferEvaluator(BaseEvaluator):
    """A SentEval-style transfer task (see :mod:`st_contrastive.evaluation.transfer`) on the current model.

    Returns ``{name}_accuracy`` (primary metric), ``{name}_dev_accuracy`` (the validation accuracy that picked C)
    and, for MRPC, ``{name}_f1``. Each call re-encodes the task's sentences with the current weights: ~10k
    sentences for MR/SUBJ/MPQA/SST-5/MRPC take minutes on CPU, so during training prefer ``max_rows`` or the
    smaller tasks (CR, TREC); the classifiers themselves take seconds.
    """

    def __init__(
        self,
        task: str,
        name: str | None = None,
        protocol: TransferProtocol = SENTEVAL,
        batch_size: int = 32,
        max_rows: int | None = None,
        show_progress_bar: bool = False,
        write_csv: bool = True,
    ):
        super().__init__()
        self.task = task
        self.data = load_transfer(task, max_rows=max_rows, seed=protocol.seed)  # read once; fails early on a bad name
        self.name = name or task
        self.protocol = protocol
        self.batch_size = batch_size
        self.max_rows = max_rows
        self.show_progress_bar = show_progress_bar
        self.write_csv = write_csv
        self.primary_metric = "accuracy"
        self.csv_file = f"transfer_evaluation_{self.name}_results.csv"

    def __call__(self, model, output_path: str | None = None, epoch: int = -1, steps: int = -1) -> dict[str, float]:
        # A fresh cache each call: the weights change between evaluations.
        cache = EmbeddingCache(model, batch_size=self.batch_size, show_progress_bar=self.show_progress_bar)
        result = transfer_scores(self.data, cache, self.protocol)
        metrics = {key: result[key] / 100 for key in ("accuracy", "dev_accuracy", "f1") if key in result}
        if output_path is not None and self.write_csv:
            self._append_csv(output_path, epoch, steps, metrics)
        metrics = self.prefix_name_to_metrics(metrics, self.name)
        self.store_metrics_in_model_card_data(model, metrics, epoch, steps)
        return metrics

    def _append_csv(self, output_path: str, epoch: int, steps: int, metrics: dict[str, float]) -> None:
        os.makedirs(output_path, exist_ok=True)
        path = os.path.join(output_path, self.csv_file)
        is_new = not os.path.isfile(path)
        with open(path, "a", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            if is_new:
                writer.writerow(["epoch", "steps", *metrics])
            writer.writerow([epoch, steps, *metrics.values()])

    @property
    def description(self) -> str:
        return "Transfer Classification"

    def get_config_dict(self) -> dict:
        protocol = self.protocol
        config = {"task": self.task, "folds": protocol.folds, "inner_folds": protocol.inner_folds or protocol.folds}
        if self.max_rows is not None:
            config["max_rows"] = self.max_rows
        if self.task == "mrpc":
            config["mrpc_features"] = protocol.mrpc_features
        return config
