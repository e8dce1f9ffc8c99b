"""SupCon core and label-based SupConLoss: parity with pytorch-metric-learning, drop-outs, no NaN."""

import math

import pytest
import torch
from pytorch_metric_learning.losses import SupConLoss as PMLSupConLoss

from st_contrastive.losses import SupConLoss
from st_contrastive.losses.contrastive_core import similarity_matrix, supcon


@pytest.mark.parametrize("temperature", [0.1, 0.5, 1.0])
def test_equals_pytorch_metric_learning(temperature):
    torch.manual_seed(0)
    embeddings = torch.randn(24, 16)
    labels = torch.randint(0, 5, (24,))
    expected = PMLSupConLoss(temperature=temperature)(embeddings, labels)
    sims = similarity_matrix(embeddings, embeddings, "cosine")
    not_self = ~torch.eye(24, dtype=torch.bool)
    ours, _ = supcon(sims, labels[:, None] == labels[None, :], not_self, temperature)
    assert ours.item() == pytest.approx(expected.item(), abs=1e-5)


def test_loss_module_equals_pml_on_model_embeddings(tiny_model):
    torch.manual_seed(1)
    texts = ["a dog runs", "a cat sleeps", "the dog is running", "a cat is asleep", "stocks fell", "markets drop"]
    labels = torch.tensor([0, 1, 0, 1, 2, 2])
    features = tiny_model.tokenize(texts)
    loss = SupConLoss(tiny_model, temperature=0.3)
    ours = loss([features], labels)
    embeddings = tiny_model(tiny_model.tokenize(texts))["sentence_embedding"]
    assert ours.item() == pytest.approx(PMLSupConLoss(temperature=0.3)(embeddings, labels).item(), abs=1e-5)
    ours.backward()
    assert any(p.grad is not None for p in tiny_model.parameters())


def test_a_step_reads_nothing_back_once_the_encoder_runs_and_warns_of_a_batch_without_positives(
    tiny_model, host_reads, caplog
):
    loss = SupConLoss(tiny_model, temperature=0.3)
    texts = ["a dog runs", "a cat sleeps", "stocks fell"]
    with host_reads(tiny_model[0]) as reads, caplog.at_level("WARNING"):
        loss([tiny_model.tokenize(texts)], torch.tensor([0, 1, 0])).backward()
    assert reads == [] and "shares its label" not in caplog.text
    with caplog.at_level("WARNING"):
        assert loss([tiny_model.tokenize(texts)], torch.tensor([0, 1, 2])).item() == 0.0
    assert "No sentence in this batch shares its label with another" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING"):  # two columns: each row's two texts are positives of each other
        loss([tiny_model.tokenize(texts), tiny_model.tokenize(texts)], torch.tensor([0, 1, 2]))
    assert "shares its label" not in caplog.text


def test_length_groups_give_the_loss_and_gradients_of_one_padded_pass_per_column(tiny_model, every_cut):
    tiny_model.eval()  # no dropout: both passes see the same network
    short = ["a dog runs", "a cat sleeps", "stocks fell", "markets drop"]
    long = ["the dog in the park runs after a red ball all afternoon", "a cat", "shares fell", "the markets dropped"]
    labels = torch.tensor([0, 1, 2, 2])
    results = {}
    for groups in (1, 4):
        loss = SupConLoss(tiny_model, temperature=0.3, length_groups=groups)
        tiny_model.zero_grad()
        out = loss([tiny_model.tokenize(short), tiny_model.tokenize(long)], labels)
        out.backward()
        grads = {name: p.grad.clone() for name, p in tiny_model.named_parameters() if p.grad is not None}
        results[groups] = out.detach(), grads
    (padded, padded_grads), (grouped, grouped_grads) = results[1], results[4]
    torch.testing.assert_close(grouped, padded, rtol=1e-5, atol=1e-6)
    assert padded_grads.keys() == grouped_grads.keys()
    for name in padded_grads:  # sums over the tokens in another order: float noise, relative to the largest entry
        atol = max(1e-4 * padded_grads[name].abs().max().item(), 1e-6)
        torch.testing.assert_close(grouped_grads[name], padded_grads[name], rtol=1e-4, atol=atol, msg=name)
    with pytest.raises(ValueError, match="length_groups"):
        SupConLoss(tiny_model, length_groups=0)


def test_hand_computed_case():
    # Two anchors; anchor 0 has positive 1 among candidates {1, 2}; anchor 1 has none and drops out.
    sims = torch.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.5]])
    positives = torch.tensor([[False, True, False], [False, False, False]])
    candidates = torch.tensor([[False, True, True], [True, False, True]])
    loss, dropped = supcon(sims, positives, candidates, temperature=1.0)
    assert dropped == 1
    assert loss.item() == pytest.approx(-math.log(math.e / (math.e + 1)), abs=1e-6)


def test_no_positive_anywhere_is_zero_not_nan(caplog):
    embeddings = torch.randn(4, 8, requires_grad=True)
    loss, dropped = supcon(
        similarity_matrix(embeddings, embeddings, "dot"),
        torch.zeros(4, 4, dtype=torch.bool),
        ~torch.eye(4, dtype=torch.bool),
        0.1,
    )
    assert dropped == 4 and loss.item() == 0.0
    loss.backward()
    assert torch.isfinite(embeddings.grad).all()


def test_dot_similarity_and_bad_name():
    a = torch.tensor([[3.0, 0.0]])
    assert similarity_matrix(a, a, "dot").item() == 9.0
    assert similarity_matrix(a, a, "cosine").item() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="similarity"):
        similarity_matrix(a, a, "euclid")
