"""CachedDeCLUTRLoss (GradCache with the MLM term in the second pass) gives DeCLUTRLoss's values and gradients, for
the encoder and the MLM head, whatever the mini-batch size, with or without sorting spans by length."""

from __future__ import annotations

import pytest
import torch

from st_contrastive.data import DeCLUTRDataCollator, SpanSampler, load_documents, prepare_declutr_dataset
from st_contrastive.data_dir import data_file
from st_contrastive.losses import CachedDeCLUTRLoss, DeCLUTRLoss

# Mini-batches sum the same float32 terms in another order; token-type embeddings, which every token touches, drift most.
TOLERANCE = {"atol": 1e-5, "rtol": 1e-4}


def _batch(model, documents=6):
    sampler = SpanSampler(num_anchors=2, num_positives=2, min_length=8, max_length=48)
    dataset = prepare_declutr_dataset(
        load_documents(data_file("corpus/docs.jsonl.gz"), limit=documents), model.tokenizer, sampler
    )
    batch = DeCLUTRDataCollator(model.tokenizer, sampler)(list(dataset))
    anchor = {k[len("anchor_") :]: v for k, v in batch.items() if k.startswith("anchor_")}
    positive = {k[len("positive_") :]: v for k, v in batch.items() if k.startswith("positive_")}
    return [anchor, positive]


def _gradients(loss, features):
    loss.zero_grad(set_to_none=True)
    loss.model.zero_grad(set_to_none=True)
    terms = loss([dict(f) for f in features])
    sum(terms.values()).backward()
    grads = {name: p.grad.clone() for name, p in loss.named_parameters() if p.grad is not None}
    return {k: float(v.detach()) for k, v in terms.items()}, grads


@pytest.mark.parametrize("mini_batch_size, sort_by_length", [(3, True), (5, False), (64, True)])
@pytest.mark.parametrize("mlm_weight", [1.0, 0.0])
def test_cached_equals_uncached(tiny_model, mini_batch_size, sort_by_length, mlm_weight):
    tiny_model.eval()  # no dropout: the uncached loss draws its masks in another order
    features = _batch(tiny_model)
    torch.manual_seed(0)
    reference = DeCLUTRLoss(tiny_model, mlm_weight=mlm_weight)
    cached = CachedDeCLUTRLoss(
        tiny_model, mlm_weight=mlm_weight, mini_batch_size=mini_batch_size, sort_by_length=sort_by_length
    )
    if mlm_weight:
        cached.mlm_head.load_state_dict(reference.mlm_head.state_dict())
    expected_terms, expected = _gradients(reference, features)
    terms, grads = _gradients(cached, features)
    assert terms.keys() == expected_terms.keys()
    for name, value in expected_terms.items():
        assert terms[name] == pytest.approx(value, rel=1e-5, abs=1e-6)
    assert grads.keys() == expected.keys() and len(grads) > 10
    for name, grad in expected.items():
        torch.testing.assert_close(grads[name], grad, **TOLERANCE, msg=name)


def test_the_scores_are_back_propagated_a_mini_batch_of_rows_at_a_time(tiny_model, monkeypatch):
    # On an H200 the whole NT-Xent matrix (8,192 × 8,192 at 4,096 anchors) and its backward took the cached loss's
    # peak from 0.4 to 2 GiB; scored a mini-batch of rows at a time, no score matrix has more rows than that.
    from st_contrastive.losses import cached_declutr

    shapes, original = [], cached_declutr.supcon
    monkeypatch.setattr(
        cached_declutr,
        "supcon",
        lambda scores, *args, **kwargs: shapes.append(tuple(scores.shape)) or original(scores, *args, **kwargs),
    )
    features = _batch(tiny_model)
    sum(CachedDeCLUTRLoss(tiny_model, mini_batch_size=5)([dict(f) for f in features]).values()).backward()
    items = 2 * len(features[0]["input_ids"])  # the anchors and their mean positives
    assert len(shapes) > 2 and all(rows <= 5 and columns == items for rows, columns in shapes)
    assert sum(rows for rows, _ in shapes) == items


def test_the_step_reads_nothing_back_from_the_device_once_the_encoder_runs(tiny_model, host_reads):
    # Each mini-batch read its MLM value and its masked-token count on the host (waits for a GPU, 2 per mini-batch).
    features = _batch(tiny_model)
    loss = CachedDeCLUTRLoss(tiny_model, mini_batch_size=5)
    with host_reads(tiny_model[0]) as reads:
        sum(loss([dict(f) for f in features]).values()).backward()
    assert reads == []


def test_second_pass_replays_the_first_pass_dropout(tiny_model):
    """With dropout on and one mini-batch per column, the cached loss draws its dropout masks in the uncached loss's
    order, so the gradients agree only if the second pass replays the first pass's masks."""
    tiny_model.train()
    features = _batch(tiny_model)
    torch.manual_seed(0)
    reference = DeCLUTRLoss(tiny_model, length_groups=1)  # one pass per column, in the batch's order
    cached = CachedDeCLUTRLoss(tiny_model, mini_batch_size=1000, sort_by_length=False)
    cached.mlm_head.load_state_dict(reference.mlm_head.state_dict())
    torch.manual_seed(1)
    _, expected = _gradients(reference, features)
    torch.manual_seed(1)
    _, grads = _gradients(cached, features)
    for name, grad in expected.items():
        torch.testing.assert_close(grads[name], grad, **TOLERANCE, msg=name)


def test_cached_refuses_mlm_only_and_a_zero_mini_batch(tiny_model):
    with pytest.raises(ValueError, match="contrastive_weight=0"):
        CachedDeCLUTRLoss(tiny_model, contrastive_weight=0.0)
    with pytest.raises(ValueError, match="mini_batch_size"):
        CachedDeCLUTRLoss(tiny_model, mini_batch_size=0)


def test_recipe_trains_with_the_cache_and_checks_the_option_first(tmp_path, tiny_mlm_dir):
    from st_contrastive.commands.declutr import main

    options = [
        "--model",
        tiny_mlm_dir,
        "--dataset",
        str(data_file("corpus/docs.jsonl.gz")),
        "--max-rows",
        "8",
        "--max-steps",
        "2",
        "--batch-size",
        "4",
        "--max-span-length",
        "32",
        "--min-span-length",
        "8",
        "--eval-tasks",
    ]
    results = main([*options, "--mini-batch-size", "3", "--output", str(tmp_path / "cached")])
    assert results["train"]["steps"] == 2 and results["train"]["loss"]["mini_batch_size"] == 3
    assert {"contrastive", "mlm"} <= set(results["train"]["last_log"])
    with pytest.raises(ValueError, match=r"--mini-batch-size 3: GradCache needs the contrastive term"):
        main([*options, "--mini-batch-size", "3", "--contrastive-weight", "0", "--output", str(tmp_path / "no")])
    assert not (tmp_path / "no").exists()
