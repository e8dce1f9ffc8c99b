"""The pretraining corpus as numbered blocks: documents tokenized once, packed into ``[CLS] ... [SEP]`` blocks of
``max_seq_length`` tokens, and split into training and held-out blocks."""

from __future__ import annotations

from datasets import Dataset
from transformers import BertTokenizerFast


def tokenize_documents(documents: Dataset, tokenizer: BertTokenizerFast) -> Dataset:
    """Each document's token ids (``input_ids``) and their count (``length``), without special tokens: those are
    added per block when packing."""

    def tokenize(batch):
        # verbose=False: documents are longer than a block on purpose; they are cut when packing.
        ids = tokenizer(batch["text"], add_special_tokens=False, verbose=False)["input_ids"]
        return {"input_ids": ids, "length": [len(row) for row in ids]}

    return documents.map(tokenize, batched=True, remove_columns=["text"], desc="Tokenizing")


def pack_into_blocks(tokenized: Dataset, tokenizer: BertTokenizerFast, max_seq_length: int) -> Dataset:
    """Concatenate the token ids of consecutive documents and cut them into ``[CLS] ... [SEP]`` blocks.

    Packing wastes no compute on padding. Blocks may cross a document boundary, as in BERT's pretraining; the tail
    shorter than a block at the end of each map batch (1,000 documents) is dropped and counted by the caller.
    """
    body = max_seq_length - 2

    def pack(batch):
        ids = [token for document in batch["input_ids"] for token in document]
        blocks = [ids[i : i + body] for i in range(0, len(ids) - body + 1, body)]
        return {"input_ids": [[tokenizer.cls_token_id, *block, tokenizer.sep_token_id] for block in blocks]}

    return tokenized.map(pack, batched=True, batch_size=1000, remove_columns=tokenized.column_names, desc="Packing")


def train_and_held_out_blocks(
    documents: Dataset, tokenizer: BertTokenizerFast, max_seq_length: int, eval_blocks: int, seed: int
) -> tuple[Dataset, Dataset, dict]:
    """The training blocks, up to ``eval_blocks`` random held-out blocks (at most a tenth), and the corpus counts.

    Every block carries its number (``block``), the masking key of :class:`BlockMaskingCollator`.
    """
    tokenized = tokenize_documents(documents, tokenizer)
    n_tokens = sum(tokenized["length"])
    blocks = pack_into_blocks(tokenized, tokenizer, max_seq_length)
    blocks = blocks.add_column("block", list(range(len(blocks))))
    n_eval = min(eval_blocks, len(blocks) // 10)
    if n_eval < 1:
        raise ValueError(
            f"Only {len(blocks)} blocks of {max_seq_length} tokens from {len(documents)} documents "
            f"({n_tokens} tokens): need at least 10 to hold some out. Pass more text or a smaller max_seq_length."
        )
    split = blocks.train_test_split(test_size=n_eval, seed=seed)
    counts = {
        "documents": len(documents), "tokens": n_tokens, "blocks": len(blocks),
        "tokens_dropped_by_packing": n_tokens - len(blocks) * (max_seq_length - 2),
        "train_blocks": len(split["train"]), "held_out_blocks": n_eval,
    }  # fmt: skip
    return split["train"], split["test"], counts
