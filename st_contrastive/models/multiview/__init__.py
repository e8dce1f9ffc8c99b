"""The multi-view stack: parsed-text input, word embeddings, GRU and Tree-LSTM view encoders, and their combiner."""

from st_contrastive.models.multiview.binary_tree_lstm import BinaryTreeLSTM, BinaryTreeLSTMCell
from st_contrastive.models.multiview.child_sum_tree_lstm import ChildSumTreeLSTM, ChildSumTreeLSTMCell
from st_contrastive.models.multiview.gru_encoder import GRUEncoder
from st_contrastive.models.multiview.multi_view import MultiView, multiview_model
from st_contrastive.models.multiview.parsed_text_input import ParsedTextInput
from st_contrastive.models.multiview.tree_batch import TreeBatch
from st_contrastive.models.multiview.vocabulary import Vocabulary
from st_contrastive.models.multiview.word_embeddings import WordEmbeddings
from st_contrastive.models.multiview.word_vectors import load_word_vectors

__all__ = [
    "BinaryTreeLSTM",
    "BinaryTreeLSTMCell",
    "ChildSumTreeLSTM",
    "ChildSumTreeLSTMCell",
    "GRUEncoder",
    "MultiView",
    "ParsedTextInput",
    "TreeBatch",
    "Vocabulary",
    "WordEmbeddings",
    "load_word_vectors",
    "multiview_model",
]
