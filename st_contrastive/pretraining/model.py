"""The model MLM pretraining trains: a small ``BertForMaskedLM``, and its subclass that scores masked positions only."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast


def build_masked_lm(
    tokenizer: BertTokenizerFast,
    hidden_size: int = 256,
    num_layers: int = 4,
    num_heads: int = 4,
    intermediate_size: int | None = None,
    max_position_embeddings: int = 512,
    dropout: float = 0.1,
    model_class: type[BertForMaskedLM] = BertForMaskedLM,
) -> BertForMaskedLM:
    """A randomly initialised ``BertForMaskedLM`` sized for ``tokenizer`` (decoder tied to the input embeddings)."""
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        intermediate_size=intermediate_size or 4 * hidden_size,
        max_position_embeddings=max_position_embeddings,
        hidden_dropout_prob=dropout,
        attention_probs_dropout_prob=dropout,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    return model_class(config)


class MaskedPositionsMLM(BertForMaskedLM):
    """A ``BertForMaskedLM`` whose training forward scores only the masked positions.

    ``BertForMaskedLM.forward`` projects every position onto the vocabulary although only ~15% carry a label; on a
    small model that projection is the largest matmul of the step (docs/declutr.md measures the difference).
    A subclass, not a wrapper, so the Trainer's checkpoints are ordinary ``save_pretrained`` folders (tied weights
    and all) that resume; ``as_masked_lm`` gives the plain ``BertForMaskedLM`` that is saved at the end.
    """

    def forward(self, input_ids, labels, attention_mask=None, token_type_ids=None, **kwargs) -> dict[str, torch.Tensor]:
        hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)[0]
        masked = labels != -100
        logits = self.cls(hidden[masked])
        # float32 cross-entropy: under bf16 autocast the log-softmax over the vocabulary would lose precision.
        return {"loss": F.cross_entropy(logits.float(), labels[masked])}

    def as_masked_lm(self) -> BertForMaskedLM:
        plain = BertForMaskedLM(self.config)
        plain.load_state_dict(self.state_dict())
        return plain
