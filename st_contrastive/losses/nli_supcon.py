"""Supervised contrastive learning on NLI with a cross-entropy head: (1−λ)·CE + λ·SupCon."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from sentence_transformers import SentenceTransformer
from sentence_transformers.base.losses.merged_forward import embed_columns
from sentence_transformers.sentence_transformer.modules import Normalize
from torch import nn

from st_contrastive.data.nli import NLI_LABELS
from st_contrastive.losses.supcon import Similarity, similarity_matrix, supcon

logger = logging.getLogger(__name__)

CLASSIFIER_WEIGHTS = "nli_classifier.safetensors"
CLASSIFIER_CONFIG = "nli_classifier.json"


class NLISupConLoss(nn.Module):
    """Cross-entropy of a softmax head over ``(u, v, |u−v|)`` (the SBERT classifier) plus premise-anchored SupCon.

    Rows are ``(premise, hypothesis, label)``. For SupCon every distinct premise of the batch is an anchor; its
    positives are its entailed hypotheses in the batch, its negatives the other hypotheses (its neutral and
    contradiction ones and every hypothesis of other premises). The premise and hypothesis embeddings are those
    of the cross-entropy forward pass: no second encoder pass. ``positives``/``negatives`` = ``"all"`` or ``k``:
    at most ``k`` of each drawn at random per anchor (the reference code's "3 negatives" silently used all
    of them; here ``k`` really limits the negatives). The total is ``(1−λ)·CE + λ·SupCon`` with
    ``λ = supcon_weight``; ``λ = 0`` equals sentence-transformers' ``SoftmaxLoss``. Premise groups must stay in
    one batch: train with :class:`~st_contrastive.data.PremiseGroupBatchSampler`.

    Anchors with no positive in the batch drop out of the SupCon term; ``anchors_without_positive`` and
    ``anchors_seen`` count them. With ``labels=None`` returns ``(embeddings, logits)``, so ST's
    ``LabelAccuracyEvaluator`` works.
    """

    def __init__(
        self,
        model: SentenceTransformer,
        num_labels: int = 3,
        supcon_weight: float = 0.3,
        temperature: float = 1.0,
        positives: str | int = "all",
        negatives: str | int = "all",
        similarity: Similarity = "cosine",
        entailment_label: int = 0,
        seed: int = 0,
    ) -> None:
        super().__init__()
        for name, value in (("positives", positives), ("negatives", negatives)):
            if value != "all" and not (isinstance(value, int) and value >= 1):
                raise ValueError(f"{name} must be 'all' or a positive integer, not {value!r}")
        if not 0 <= supcon_weight <= 1:
            raise ValueError(f"supcon_weight (λ) must be in [0, 1], not {supcon_weight}")
        self.model = model
        self.num_labels = num_labels
        self.supcon_weight = supcon_weight
        self.temperature = temperature
        self.positives = positives
        self.negatives = negatives
        self.similarity = similarity
        self.entailment_label = entailment_label
        self.classifier = nn.Linear(3 * model.get_embedding_dimension(), num_labels, device=model.device)
        if isinstance(model[-1], Normalize):
            # Unit-norm (u, v, |u−v|) features start the head's logits near zero; CE then reshapes the whole space
            # (all-MiniLM-L6-v2 on SNLI dev+test: STS-B 82 -> 46 with Normalize, -> 70 without).
            logger.warning("The model ends in Normalize: the softmax head sees unit-norm embeddings and CE training "
                           "distorts the space. Train Transformer + Pooling (the paper's setup): "
                           "SentenceTransformer(modules=list(model)[:-1]); cosine similarities are the same.")
        self.generator = torch.Generator().manual_seed(seed)
        self.anchors_seen = 0
        self.anchors_without_positive = 0

    def forward(
        self, sentence_features: Iterable[dict[str, torch.Tensor]], labels: torch.Tensor | None
    ) -> dict[str, torch.Tensor] | tuple[list[torch.Tensor], torch.Tensor]:
        sentence_features = list(sentence_features)
        premises, hypotheses = embed_columns(self.model, sentence_features)
        logits = self.classifier(torch.cat([premises, hypotheses, (premises - hypotheses).abs()], dim=1).to(self.classifier.weight.dtype))
        if labels is None:
            return [premises, hypotheses], logits
        if (labels < 0).any() or (labels >= self.num_labels).any():
            bad = int(torch.nonzero((labels < 0) | (labels >= self.num_labels))[0])
            raise ValueError(f"batch row {bad} has label {int(labels[bad])}; expected 0..{self.num_labels - 1}")
        losses = {"cross_entropy": (1 - self.supcon_weight) * F.cross_entropy(logits, labels.view(-1))}
        if self.supcon_weight > 0:
            group = premise_groups(sentence_features[0]["input_ids"])
            losses["supcon"] = self.supcon_weight * self.premise_supcon(premises, hypotheses, group, labels)
        return losses

    def premise_supcon(self, premises, hypotheses, group, labels) -> torch.Tensor:
        num_groups = int(group.max()) + 1
        first_row = torch.full((num_groups,), len(group), device=group.device).scatter_reduce(
            0, group, torch.arange(len(group), device=group.device), reduce="amin"
        )
        same_premise = group[None, :] == torch.arange(num_groups, device=group.device)[:, None]
        positive = same_premise & (labels[None, :] == self.entailment_label)
        negative = ~positive
        positive = self._keep_at_most(positive, self.positives)
        negative = self._keep_at_most(negative, self.negatives)
        similarities = similarity_matrix(premises[first_row], hypotheses, self.similarity)
        loss, dropped = supcon(similarities, positive, positive | negative, self.temperature)
        self.anchors_seen += num_groups
        self.anchors_without_positive += dropped
        if dropped == num_groups:
            logger.warning("No premise in this batch has an entailed hypothesis: the SupCon term is zero.")
        return loss

    def _keep_at_most(self, mask: torch.Tensor, k: str | int) -> torch.Tensor:
        """``k`` randomly chosen True entries per row (all of them when a row has fewer, or ``k == "all"``)."""
        if k == "all":
            return mask
        scores = torch.rand(mask.shape, generator=self.generator).to(mask.device).masked_fill(~mask, -1.0)
        top = scores.topk(min(k, mask.shape[1]), dim=1).indices
        chosen = torch.zeros_like(mask).scatter_(1, top, True)
        return chosen & mask

    def save_classifier(self, path: str | Path) -> None:
        """Write the NLI head beside a checkpoint, for :func:`load_nli_classifier`."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        save_file({k: v.contiguous() for k, v in self.classifier.state_dict().items()}, str(path / CLASSIFIER_WEIGHTS))
        config = {"labels": list(NLI_LABELS[: self.num_labels]), "features": ["u", "v", "|u-v|"],
                  "embedding_dimension": self.classifier.in_features // 3}
        (path / CLASSIFIER_CONFIG).write_text(json.dumps(config, indent=2))

    def get_config_dict(self) -> dict[str, Any]:
        return {
            "num_labels": self.num_labels,
            "supcon_weight": self.supcon_weight,
            "temperature": self.temperature,
            "positives": self.positives,
            "negatives": self.negatives,
            "similarity": self.similarity,
        }

    @property
    def citation(self) -> str:
        return """
@misc{supcon_sentence_embeddings_2021,
    title = {Sentence Embeddings using Supervised Contrastive Learning},
    year = {2021},
    note = {arXiv preprint},
}
"""


def premise_groups(premise_input_ids: torch.Tensor) -> torch.Tensor:
    """Group id per row: rows with the same premise tokens share one."""
    return torch.unique(premise_input_ids, dim=0, return_inverse=True)[1]


def load_nli_classifier(path: str | Path) -> tuple[nn.Linear, list[str]]:
    """The NLI head written by :meth:`NLISupConLoss.save_classifier` and its label names."""
    path = Path(path)
    config = json.loads((path / CLASSIFIER_CONFIG).read_text())
    classifier = nn.Linear(3 * config["embedding_dimension"], len(config["labels"]))
    classifier.load_state_dict(load_file(str(path / CLASSIFIER_WEIGHTS)))
    return classifier, config["labels"]


def predict_nli(model: SentenceTransformer, classifier: nn.Linear, labels: list[str], premises, hypotheses) -> list[str]:
    """NLI labels predicted from sentence embeddings and the exported head."""
    u = model.encode(list(premises), convert_to_tensor=True)
    v = model.encode(list(hypotheses), convert_to_tensor=True)
    with torch.no_grad():
        logits = classifier(torch.cat([u, v, (u - v).abs()], dim=1).to(classifier.weight.device))
    return [labels[i] for i in logits.argmax(dim=1).tolist()]
