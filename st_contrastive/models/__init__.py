"""Sentence-transformers modules of the package: heads that losses train, and the multi-view encoders."""

from st_contrastive.models.binary_tree_lstm import BinaryTreeLSTM, BinaryTreeLSTMCell
from st_contrastive.models.child_sum_tree_lstm import ChildSumTreeLSTM, ChildSumTreeLSTMCell
from st_contrastive.models.dropout import dropout_rate
from st_contrastive.models.gru_encoder import GRUEncoder
from st_contrastive.models.head import Head
from st_contrastive.models.label_classifier import LabelClassifier
from st_contrastive.models.masked_lm_encoder import mean_pooled_encoder
from st_contrastive.models.masked_lm_head import MaskedLMHead
from st_contrastive.models.multi_view import MultiView, multiview_model
from st_contrastive.models.nli_classifier import NLI_LABELS, NLIClassifier, load_nli_classifier, predict_nli
from st_contrastive.models.parsed_text_input import ParsedTextInput
from st_contrastive.models.tree_batch import TreeBatch
from st_contrastive.models.vocabulary import Vocabulary
from st_contrastive.models.word_embeddings import WordEmbeddings
from st_contrastive.models.word_vectors import load_word_vectors

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
