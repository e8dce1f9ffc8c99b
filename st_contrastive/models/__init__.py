"""Sentence-transformers modules of the package: heads that losses train, saved beside the encoder."""

from st_contrastive.models.dropout import dropout_rate
from st_contrastive.models.head import Head
from st_contrastive.models.label_classifier import LabelClassifier
from st_contrastive.models.masked_lm_head import IGNORE_INDEX, MaskedLMHead, mask_tokens
from st_contrastive.models.nli_classifier import NLI_LABELS, NLIClassifier, load_nli_classifier, predict_nli

__all__ = [
    "IGNORE_INDEX",
    "NLI_LABELS",
    "Head",
    "LabelClassifier",
    "MaskedLMHead",
    "NLIClassifier",
    "dropout_rate",
    "load_nli_classifier",
    "mask_tokens",
    "predict_nli",
]
