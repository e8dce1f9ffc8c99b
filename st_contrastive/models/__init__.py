"""Sentence-transformers modules of the package: heads that losses train, and the multi-view encoders."""

from st_contrastive.models.dropout import dropout_rate
from st_contrastive.models.heads import (
    NLI_LABELS,
    Head,
    LabelClassifier,
    MaskedLMHead,
    NLIClassifier,
    load_nli_classifier,
    predict_nli,
)
from st_contrastive.models.masked_lm_encoder import mean_pooled_encoder
from st_contrastive.models.masking import IGNORE_INDEX, mask_tokens
from st_contrastive.models.multiview import (
    BinaryTreeLSTM,
    BinaryTreeLSTMCell,
    ChildSumTreeLSTM,
    ChildSumTreeLSTMCell,
    GRUEncoder,
    MultiView,
    ParsedTextInput,
    TreeBatch,
    Vocabulary,
    WordEmbeddings,
    load_word_vectors,
    multiview_model,
)

__all__ = [
    "IGNORE_INDEX",
    "NLI_LABELS",
    "BinaryTreeLSTM",
    "BinaryTreeLSTMCell",
    "ChildSumTreeLSTM",
    "ChildSumTreeLSTMCell",
    "GRUEncoder",
    "Head",
    "LabelClassifier",
    "MaskedLMHead",
    "MultiView",
    "NLIClassifier",
    "ParsedTextInput",
    "TreeBatch",
    "Vocabulary",
    "WordEmbeddings",
    "dropout_rate",
    "load_nli_classifier",
    "load_word_vectors",
    "mask_tokens",
    "mean_pooled_encoder",
    "multiview_model",
    "predict_nli",
]
