"""The heads that losses train on top of sentence embeddings: classifiers and the MLM head."""

from st_contrastive.models.heads.head import Head
from st_contrastive.models.heads.label_classifier import LabelClassifier
from st_contrastive.models.heads.masked_lm_head import MaskedLMHead
from st_contrastive.models.heads.nli_classifier import NLI_LABELS, NLIClassifier, load_nli_classifier, predict_nli

__all__ = [
    "NLI_LABELS",
    "Head",
    "LabelClassifier",
    "MaskedLMHead",
    "NLIClassifier",
    "load_nli_classifier",
    "predict_nli",
]
