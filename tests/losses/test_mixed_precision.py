"""bf16 on CPU: under autocast the losses keep similarities and log-sum-exp in float32 and stay finite and close to
their float32 values, and a recipe trains with --bf16 through the trainer."""

from __future__ import annotations

import math

import pytest
import torch

from st_contrastive.data import DeCLUTRDataCollator, SpanSampler, load_documents, prepare_declutr_dataset
from st_contrastive.data_dir import data_file
from st_contrastive.losses import CachedDeCLUTRLoss, DeCLUTRLoss, SupConLoss
from st_contrastive.losses.contrastive_core import similarity_matrix, supcon


def _declutr_features(model):
    sampler = SpanSampler(num_anchors=2, num_positives=2, min_length=8, max_length=48)
    dataset = prepare_declutr_dataset(
        load_documents(data_file("corpus/docs.jsonl.gz"), limit=6), model.tokenizer, sampler
    )
    batch = DeCLUTRDataCollator(model.tokenizer, sampler)(list(dataset))
    return [{k[len(c) + 1 :]: v for k, v in batch.items() if k.startswith(c + "_")} for c in ("anchor", "positive")]


def test_similarities_are_float32_under_bf16_autocast():
    anchors, candidates = torch.randn(4, 8, dtype=torch.bfloat16), torch.randn(6, 8, dtype=torch.bfloat16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        similarities = similarity_matrix(anchors, candidates)
        # Every candidate but one masked out with -inf: the log-sum-exp stays finite in float32.
        mask = torch.zeros(4, 6, dtype=torch.bool)
        mask[:, 0] = True
        loss, dropped = supcon(similarities, mask, mask, temperature=0.05)
    assert similarities.dtype == torch.float32 and loss.dtype == torch.float32
    assert torch.isfinite(loss) and loss.item() == pytest.approx(0.0, abs=1e-6) and dropped == 0


@pytest.mark.parametrize("loss_class", [DeCLUTRLoss, CachedDeCLUTRLoss])
def test_declutr_losses_under_bf16_are_finite_and_close_to_float32(tiny_model, loss_class):
    tiny_model.eval()
    features = _declutr_features(tiny_model)
    torch.manual_seed(0)
    loss = loss_class(tiny_model, **({"mini_batch_size": 4} if loss_class is CachedDeCLUTRLoss else {}))
    full = {k: float(v.detach()) for k, v in loss([dict(f) for f in features]).items()}
    with torch.autocast("cpu", dtype=torch.bfloat16):
        terms = loss([dict(f) for f in features])
        sum(terms.values()).backward()
    grads = [p.grad for p in loss.parameters() if p.grad is not None]
    assert grads and all(torch.isfinite(g).all() for g in grads)
    for name, value in terms.items():
        assert math.isfinite(float(value.detach()))
        assert float(value.detach()) == pytest.approx(full[name], rel=0.05), name


def test_label_supcon_under_bf16_is_close_to_float32(tiny_model):
    tiny_model.eval()
    features = [tiny_model.preprocess(["great film", "loved it", "dull and long", "a waste of time"])]
    labels = torch.tensor([1, 1, 0, 0])
    loss = SupConLoss(tiny_model, temperature=0.05)
    full = loss([dict(features[0])], labels).item()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        low = loss([dict(features[0])], labels)
    assert low.dtype == torch.float32 and low.item() == pytest.approx(full, rel=0.05)


def test_declutr_recipe_trains_in_bf16_on_cpu(tmp_path, tiny_mlm_dir):
    from st_contrastive.commands.declutr import main

    results = main(
        [
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
            "--bf16",
            "--output",
            str(tmp_path / "bf16"),
        ]
    )
    logged = results["train"]["last_log"]
    assert results["train"]["steps"] == 2 and results["config"]["training"]["bf16"] is True
    assert all(math.isfinite(logged[k]) for k in ("loss", "contrastive", "mlm", "grad_norm"))
