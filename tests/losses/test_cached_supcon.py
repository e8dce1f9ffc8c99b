"""The cached SupCon losses (sentence-transformers' GradCache mixin) give the uncached losses' values and gradients,
the NLI head's included, for any mini-batch size."""

from __future__ import annotations

import pytest
import torch

from st_contrastive.data import PremiseGroupDataCollator, load_nli
from st_contrastive.losses import CachedNLISupConLoss, CachedSupConLoss, NLISupConLoss, SupConLoss

TOLERANCE = {"atol": 1e-5, "rtol": 1e-4}  # mini-batches sum the same float32 terms in another order


def _gradients(loss, features, labels):
    loss.zero_grad(set_to_none=True)
    loss.model.zero_grad(set_to_none=True)
    value = loss([dict(f) for f in features], labels)
    value = sum(value.values()) if isinstance(value, dict) else value
    value.backward()
    return float(value.detach()), {n: p.grad.clone() for n, p in loss.named_parameters() if p.grad is not None}


def _assert_same(cached, reference, features, labels):
    expected_value, expected = _gradients(reference, features, labels)
    value, grads = _gradients(cached, features, labels)
    assert value == pytest.approx(expected_value, rel=1e-5)
    assert grads.keys() == expected.keys() and len(grads) > 10
    for name, grad in expected.items():
        torch.testing.assert_close(grads[name], grad, **TOLERANCE, msg=name)


@pytest.mark.parametrize(("mini_batch_size", "normalized"), [(1, False), (5, False), (100, False), (5, True)])
def test_cached_nli_supcon_equals_uncached(tiny_model, mini_batch_size, normalized):
    """Also for a model that ends in Normalize, which both pass by in both GradCache passes."""
    if normalized:
        from sentence_transformers import SentenceTransformer
        from sentence_transformers.sentence_transformer.modules import Normalize

        tiny_model = SentenceTransformer(modules=[*tiny_model, Normalize()], device="cpu")
    tiny_model.eval()
    rows = load_nli("snli-dev", max_rows=18).to_list()
    batch = PremiseGroupDataCollator(tiny_model.preprocess)(rows)
    # The trainer hands each column its keys; premise_group arrives as the premise features' "group".
    features = [
        {k[len(c) + 1 :]: v for k, v in batch.items() if k.startswith(c + "_")} for c in ("premise", "hypothesis")
    ]
    assert "group" in features[0]
    torch.manual_seed(0)
    reference = NLISupConLoss(tiny_model, supcon_weight=0.5)
    cached = CachedNLISupConLoss(
        tiny_model, classifier=reference.classifier, supcon_weight=0.5, mini_batch_size=mini_batch_size
    )
    assert any("classifier" in name for name in dict(reference.named_parameters()))
    _assert_same(cached, reference, features, batch["label"])


@pytest.mark.parametrize("mini_batch_size", [1, 3, 100])
def test_cached_label_supcon_equals_uncached(tiny_model, mini_batch_size):
    tiny_model.eval()
    texts = ["great film", "loved it", "dull and long", "a waste of time", "superb acting", "so boring"]
    features = [tiny_model.preprocess(texts)]
    labels = torch.tensor([1, 1, 0, 0, 1, 0])
    _assert_same(
        CachedSupConLoss(tiny_model, mini_batch_size=mini_batch_size), SupConLoss(tiny_model), features, labels
    )
