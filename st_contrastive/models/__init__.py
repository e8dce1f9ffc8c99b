"""Sentence-transformers modules of the package: heads that losses train, and the multi-view encoders."""

import sys

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

# A saved SentenceTransformer names each module's class by its dotted path in modules.json, and loading imports that
# path. Multi-view checkpoints saved before models/ was split into heads/ and multiview/ name the old modules, so
# those names stay registered, pointing at the moved ones; new saves record the new paths.
MOVED_MODULES = {
    "st_contrastive.models.multi_view": "st_contrastive.models.multiview.multi_view",
    "st_contrastive.models.parsed_text_input": "st_contrastive.models.multiview.parsed_text_input",
}
sys.modules.update({old: sys.modules[new] for old, new in MOVED_MODULES.items()})

__all__ = [
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
    "mean_pooled_encoder",
    "multiview_model",
    "predict_nli",
]
