"""The MLM head at its FLOP cost: with the embedding lookup's gradient sparse, the tied weight gets the same update,
a step that masks nothing still hands the optimiser a dense gradient, and the lookups' rows are added to the
decoder's dense gradient once however many encoder calls made them."""

import contextlib

import torch
from declutr_batches import documents, span_collator
from torch.profiler import ProfilerActivity, profile

from st_contrastive.models.heads.masked_lm_head import MaskedLMHead
from st_contrastive.models.masking import IGNORE_INDEX


def mlm_gradient(model, head, batch, sparse: bool, calls: int = 1, decoder_alias: bool = True) -> torch.Tensor:
    """The tied matrix's gradient from the anchors' MLM loss and sentence embeddings, the anchors embedded in
    ``calls`` encoder calls."""
    features = {k[len("anchor_") :]: v for k, v in batch.items() if k.startswith("anchor_")}
    labels = features.pop("mlm_labels")
    model.zero_grad(set_to_none=True)
    head.zero_grad(set_to_none=True)
    with head.sparse_lookup_gradient() if sparse else contextlib.nullcontext() as decoder_weight:
        parts = [model({k: v[i::calls] for k, v in features.items()}) for i in range(calls)]
    tokens = torch.cat([part["token_embeddings"].flatten(0, 1) for part in parts])
    targets = torch.cat([labels[i::calls].flatten() for i in range(calls)])
    chosen = targets != IGNORE_INDEX
    loss = head.masked_loss(tokens[chosen], targets[chosen], decoder_weight if decoder_alias else None)
    (loss + sum(part["sentence_embedding"].sum() for part in parts)).backward()
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


def test_the_lookups_rows_are_added_to_the_decoders_gradient_once_however_many_encoder_calls(tiny_model):
    tiny_model.eval()
    head = MaskedLMHead(tiny_model[0].auto_model)
    batch = span_collator(tiny_model.tokenizer)(documents(3))
    matrix = list(tiny_model[0].auto_model.get_input_embeddings().weight.shape)

    def matrix_copies(decoder_alias: bool) -> tuple[int, torch.Tensor]:
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            grad = mlm_gradient(tiny_model, head, batch, sparse=True, calls=3, decoder_alias=decoder_alias)
        copies = [e for e in prof.events() if e.name == "aten::copy_" and e.input_shapes[:1] == [matrix]]
        return len(copies), grad.clone()

    once, grad = matrix_copies(decoder_alias=True)
    per_call, unaliased = matrix_copies(decoder_alias=False)
    assert (once, per_call) == (1, 3)  # the decoder reading the tied matrix itself: one copy per encoder call
    torch.testing.assert_close(grad, unaliased)
    torch.testing.assert_close(grad, mlm_gradient(tiny_model, head, batch, sparse=False, calls=3), rtol=1e-5, atol=1e-7)
