"""A BERT-style WordPiece tokenizer trained on a corpus, for the small MLM base."""

from __future__ import annotations

from collections.abc import Iterable

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import BertTokenizerFast

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def train_wordpiece_tokenizer(
    texts: Iterable[str], vocab_size: int = 8000, lowercase: bool = True, model_max_length: int = 512
) -> BertTokenizerFast:
    """Train a BERT-style WordPiece tokenizer on ``texts``. The same texts give the same vocabulary, ids included.

    tokenizers' WordPiece trainer numbers each ``##`` continuation piece when it first meets it while iterating a
    hash map, so those ids change from run to run, and equally frequent merges are then chosen by the ids: the same
    texts trained other vocabularies (huggingface/tokenizers#1794, open). So every continuation piece of the texts
    is named up front, sorted, among the trainer's special tokens, and nothing is numbered in hash order; the
    trained vocabulary then goes into a plain WordPiece model whose only special tokens are BERT's.
    """
    texts = list(texts)  # read twice: for the continuation pieces, then by the trainer
    normalizer, split = normalizers.BertNormalizer(lowercase=lowercase), pre_tokenizers.BertPreTokenizer()
    continued = {
        character
        for text in texts
        for word, _ in split.pre_tokenize_str(normalizer.normalize_str(text))
        for character in word[1:]
    }
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS + [f"##{character}" for character in sorted(continued)]
    )
    trained = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    trained.normalizer, trained.pre_tokenizer = normalizer, split
    trained.train_from_iterator(texts, trainer=trainer)

    tokenizer = Tokenizer(models.WordPiece(trained.get_vocab(with_added_tokens=False), unk_token="[UNK]"))
    tokenizer.normalizer, tokenizer.pre_tokenizer = normalizer, split
    tokenizer.decoder = decoders.WordPiece()
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    return BertTokenizerFast(
        tokenizer_object=tokenizer,
        do_lower_case=lowercase,
        model_max_length=model_max_length,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    )
