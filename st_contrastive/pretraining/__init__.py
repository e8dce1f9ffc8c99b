"""MLM pretraining of a small base encoder (WordPiece tokenizer + BERT) on a document corpus."""

from st_contrastive.pretraining.masked_lm import pretrain_masked_lm
from st_contrastive.pretraining.model import build_masked_lm
from st_contrastive.pretraining.wordpiece import train_wordpiece_tokenizer

__all__ = ["build_masked_lm", "pretrain_masked_lm", "train_wordpiece_tokenizer"]
