"""Embedding in length groups: the cheapest cut of sorted lengths (against trying every cut), and DeCLUTRLoss's loss
and gradients against one padded pass per column, with fewer tokens computed."""

import itertools
import random

import pytest
import torch
from declutr_batches import documents, span_collator

from st_contrastive.losses import DeCLUTRLoss
from st_contrastive.losses.length_groups import LengthGroups, cheapest_groups


def tokens_of(lengths, bounds) -> int:
    return sum((end - begin) * lengths[begin] for begin, end in bounds)


@pytest.mark.parametrize("call_tokens", [0, 3, 20])
def test_the_cut_costs_the_least_of_every_possible_cut(call_tokens):
    """The tokens computed, plus ``call_tokens`` per group (what one more encoder call costs)."""
    rng = random.Random(call_tokens)

    def cost(bounds):
        return tokens_of(lengths, bounds) + call_tokens * len(bounds)

    for _ in range(300):
        lengths = sorted((rng.randint(1, 12) for _ in range(rng.randint(1, 9))), reverse=True)
        groups = rng.randint(1, 4)
        bounds = cheapest_groups(lengths, groups, call_tokens)
        n = len(lengths)
        assert len(bounds) <= groups and bounds[0][0] == 0 and bounds[-1][1] == n
        assert all(a[1] == b[0] for a, b in itertools.pairwise(bounds))
        every_cut = ([0, *cuts, n] for k in range(groups) for cuts in itertools.combinations(range(1, n), k))
        assert cost(bounds) == min(cost(list(itertools.pairwise(points))) for points in every_cut)


def test_a_thousand_rows_are_cut_at_their_few_distinct_lengths():
    rng = random.Random(1)
    lengths = sorted((rng.randint(8, 128) for _ in range(1000)), reverse=True)
    bounds = cheapest_groups(lengths, 4)
    assert len(bounds) == 4 and tokens_of(lengths, bounds) < 0.8 * len(lengths) * lengths[0]


def columns(batch):
    return [
        {k[len("anchor_") :]: v for k, v in batch.items() if k.startswith("anchor_")},
        {k[len("positive_") :]: v for k, v in batch.items() if k.startswith("positive_")},
    ]


def encoded_tokens(model):
    """Tokens the encoder computes, padding included, recorded per forward."""
    widths = []
    handle = model[0].register_forward_pre_hook(lambda _, args: widths.append(args[0]["input_ids"].numel()))
    return widths, handle


@pytest.mark.parametrize("mlm_weight", [1.0, 0.0])
def test_the_loss_and_its_gradients_equal_one_padded_pass_with_fewer_tokens(tiny_model, every_cut, mlm_weight):
    tiny_model.eval()  # no dropout: both passes see the same network
    batch = span_collator(tiny_model.tokenizer)(documents(4))
    results = {}
    for groups in (1, 4):
        loss = DeCLUTRLoss(tiny_model, mlm_weight=mlm_weight, length_groups=groups)
        if mlm_weight:
            torch.manual_seed(0)
            loss.mlm_head.load_state_dict(DeCLUTRLoss(tiny_model).mlm_head.state_dict())  # one head for both
        widths, handle = encoded_tokens(tiny_model)
        out = loss(columns(batch), None)
        handle.remove()
        tiny_model.zero_grad()
        sum(out.values()).backward()
        grads = {name: p.grad.clone() for name, p in tiny_model.named_parameters() if p.grad is not None}
        results[groups] = ({k: v.detach() for k, v in out.items()}, grads, sum(widths))
    (padded, padded_grads, padded_tokens), (grouped, grouped_grads, grouped_tokens) = results[1], results[4]
    assert set(grouped) == set(padded) == ({"contrastive", "mlm"} if mlm_weight else {"contrastive"})
    for name in padded:
        torch.testing.assert_close(grouped[name], padded[name], rtol=1e-5, atol=1e-6)
    assert grouped_grads.keys() == padded_grads.keys()
    for name in padded_grads:  # sums over the tokens in another order: float noise, relative to the largest entry
        atol = max(1e-4 * padded_grads[name].abs().max().item(), 1e-6)  # (attention's key bias: noise alone)
        torch.testing.assert_close(grouped_grads[name], padded_grads[name], rtol=1e-4, atol=atol, msg=name)
    assert grouped_tokens < 0.9 * padded_tokens


def test_the_columns_come_back_in_their_order_with_the_anchors_masked_tokens(tiny_model, every_cut):
    batch = span_collator(tiny_model.tokenizer)(documents(3))
    anchors, positives = columns(batch)
    labels = anchors.pop("mlm_labels")
    tiny_model.eval()
    for groups in (1, 3):
        (anchor_embeddings, positive_embeddings), tokens, targets = LengthGroups.of(
            [anchors, positives], groups, labels
        ).embed(tiny_model)
        full = tiny_model(anchors)
        torch.testing.assert_close(anchor_embeddings, full["sentence_embedding"], rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(
            positive_embeddings, tiny_model(positives)["sentence_embedding"], rtol=1e-5, atol=1e-6
        )
        chosen = labels != -100
        expected = sorted(zip(labels[chosen].tolist(), full["token_embeddings"][chosen].sum(1).tolist()))
        got = sorted(zip(targets.tolist(), tokens.sum(1).tolist()))
        assert [label for label, _ in got] == [label for label, _ in expected]
        assert [value for _, value in got] == pytest.approx([value for _, value in expected], abs=1e-4)


def test_where_a_call_costs_more_than_the_padding_it_saves_the_columns_share_one_call(tiny_model, monkeypatch):
    """On a GPU each encoder call's launches cost thousands of tokens (``CALL_TOKENS``): with such a cost, the
    anchors and positives go through the encoder in one call, not one per column, and come back the same."""
    from st_contrastive.losses import length_groups

    batch = span_collator(tiny_model.tokenizer)(documents(3))
    anchors, positives = columns(batch)
    anchors.pop("mlm_labels")
    tiny_model.eval()
    monkeypatch.setitem(length_groups.CALL_TOKENS, "cpu", 10**6)
    widths, handle = encoded_tokens(tiny_model)
    anchor_embeddings, positive_embeddings = LengthGroups.of([anchors, positives], 4).embed(tiny_model)[0]
    handle.remove()
    assert len(widths) == 1
    for got, column in ((anchor_embeddings, anchors), (positive_embeddings, positives)):
        torch.testing.assert_close(got, tiny_model(column)["sentence_embedding"], rtol=1e-5, atol=1e-6)
