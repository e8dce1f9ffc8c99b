"""nt_xent equals pytorch-metric-learning's NTXentLoss and a naive loop."""

import math

import pytest
import torch
from pytorch_metric_learning.losses import NTXentLoss

from st_contrastive.losses import nt_xent


@pytest.mark.parametrize("temperature", [0.05, 0.5, 1.0])
def test_equals_pytorch_metric_learning(temperature):
    torch.manual_seed(0)
    anchors, positives = torch.randn(12, 16), torch.randn(12, 16)
    labels = torch.arange(12).repeat(2)
    expected = NTXentLoss(temperature=temperature)(torch.cat([anchors, positives]), labels)
    assert nt_xent(anchors, positives, temperature).item() == pytest.approx(expected.item(), abs=1e-5)


def test_equals_naive_simclr_loop():
    torch.manual_seed(1)
    anchors, positives, tau = torch.randn(5, 8), torch.randn(5, 8), 0.1
    items = torch.nn.functional.normalize(torch.cat([anchors, positives]), dim=-1)
    total = 0.0
    for i in range(10):
        partner = (i + 5) % 10
        others = [math.exp(items[i] @ items[k] / tau) for k in range(10) if k != i]
        total += -math.log(math.exp(items[i] @ items[partner] / tau) / sum(others))
    assert nt_xent(anchors, positives, tau).item() == pytest.approx(total / 10, rel=1e-5)


def test_float32_under_half_inputs_and_gradients():
    torch.manual_seed(2)
    anchors = torch.randn(4, 8, dtype=torch.bfloat16, requires_grad=True)
    loss = nt_xent(anchors, torch.randn(4, 8, dtype=torch.bfloat16), 0.05)
    assert loss.dtype == torch.float32
    loss.backward()
    assert anchors.grad is not None and torch.isfinite(anchors.grad.float()).all()


def test_gather_without_distributed_is_the_local_loss():
    torch.manual_seed(3)
    anchors, positives = torch.randn(6, 8), torch.randn(6, 8)
    assert nt_xent(anchors, positives, 0.05, gather_across_devices=True).item() == pytest.approx(
        nt_xent(anchors, positives, 0.05).item(), abs=1e-6
    )
