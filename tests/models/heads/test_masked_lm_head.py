"""The MLM head at its FLOP cost: with the embedding lookup's gradient sparse, the tied weight gets the same update,
and a step that masks nothing still hands the optimiser a dense gradient."""

import contextlib

import torch
from declutr_batches import documents, span_collator

from st_contrastive.models.heads.masked_lm_head import MaskedLMHead


def mlm_gradient(model, head, batch, sparse: bool) -> torch.Tensor:
    features = {k[len("anchor_") :]: v for k, v in batch.items() if k.startswith("anchor_")}
    labels = features.pop("mlm_labels")
    model.zero_grad(set_to_none=True)
    head.zero_grad(set_to_none=True)
    with head.sparse_lookup_gradient() if sparse else contextlib.nullcontext():
        out = model(features)
    (head(out["token_embeddings"], labels) + out["sentence_embedding"].sum()).backward()
    return model[0].auto_model.get_input_embeddings().weight.grad


def test_the_sparse_lookup_gradient_gives_the_tied_weight_the_same_dense_gradient(tiny_model):
    tiny_model.eval()
    head = MaskedLMHead(tiny_model[0].auto_model)
    assert head.tied
    batch = span_collator(tiny_model.tokenizer)(documents(3))
    dense = mlm_gradient(tiny_model, head, batch, sparse=False).clone()
    sparse = mlm_gradient(tiny_model, head, batch, sparse=True)
    assert not sparse.is_sparse and not tiny_model[0].auto_model.get_input_embeddings().sparse
    torch.testing.assert_close(sparse, dense, rtol=1e-5, atol=1e-7)
    # No masked token: the lookup's rows alone, made dense for the optimiser.
    batch["anchor_mlm_labels"] = torch.full_like(batch["anchor_mlm_labels"], -100)
    unmasked = mlm_gradient(tiny_model, head, batch, sparse=True)
    assert not unmasked.is_sparse and unmasked.shape == dense.shape
    torch.testing.assert_close(unmasked, mlm_gradient(tiny_model, head, batch, sparse=False))
    MaskedLMHead(tiny_model[0].auto_model)  # a second head on the same encoder: still one densifying hook
    assert len(tiny_model[0].auto_model.get_input_embeddings().weight._backward_hooks) == 1
