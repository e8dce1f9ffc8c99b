"""SCALe's pieces: dropout views set and restored, the loss against references, balanced batches for tiny pools."""

import pytest
import torch
import torch.nn.functional as F
from datasets import Dataset
from pytorch_metric_learning.losses import SupConLoss as PMLSupConLoss
from torch import nn

from st_contrastive.data import ClassBalancedBatchSampler
from st_contrastive.losses import SCALeLoss
from st_contrastive.models import dropout_rate

TEXTS = [
    "What is the capital of France ?",
    "Who wrote Hamlet ?",
    "Where is Lima ?",
    "Who painted the Mona Lisa ?",
    "How far is the moon ?",
    "When did the war end ?",
]
LABELS = torch.tensor([0, 1, 0, 1, 2, 2])


def rates(module):
    return [layer.p for layer in module.modules() if isinstance(layer, nn.Dropout)]


def test_dropout_rate_sets_every_layer_and_restores_them_also_on_error(tiny_model):
    tiny_model[0].auto_model.embeddings.dropout.p = 0.05  # one layer with a rate of its own
    before = rates(tiny_model)
    assert len(before) > 3
    with dropout_rate(tiny_model, 0.3):
        assert set(rates(tiny_model)) == {0.3}
    assert rates(tiny_model) == before
    with pytest.raises(RuntimeError, match="boom"), dropout_rate(tiny_model, 0.4):
        raise RuntimeError("boom")
    assert rates(tiny_model) == before
    with pytest.raises(ValueError, match=r"in \[0, 1\)"), dropout_rate(tiny_model, 1.0):
        pass


def test_supcon_term_equals_pml_over_the_views_and_ce_is_their_mean(tiny_model):
    tiny_model.train()
    loss = SCALeLoss(
        tiny_model, num_labels=3, supcon_weight=0.5, temperature=0.3, dropout_rates=(0.0, 0.2, 0.4), length_groups=1
    )  # one pass per view draws its dropout masks as the reference below does
    features = tiny_model.tokenize(TEXTS)
    torch.manual_seed(7)
    out = loss([features], LABELS)
    torch.manual_seed(7)  # the same dropout draws, view by view
    views = []
    for rate in (0.0, 0.2, 0.4):
        with dropout_rate(tiny_model, rate):
            views.append(tiny_model(dict(features))["sentence_embedding"])
    assert not torch.allclose(views[1], views[2])  # the views really differ
    reference = PMLSupConLoss(temperature=0.3)(torch.cat(views), LABELS.repeat(3))
    assert out["supcon"].item() == pytest.approx(0.5 * reference.item(), abs=1e-5)
    ce = torch.stack([F.cross_entropy(loss.classifier(v), LABELS) for v in views]).mean()
    assert out["cross_entropy"].item() == pytest.approx(0.5 * ce.item(), abs=1e-5)


def test_a_training_step_reads_nothing_back_to_the_host_once_the_encoder_runs(tiny_model, host_reads):
    """The label range is checked before the encoder runs: on a GPU a read after it (the check used to come after
    the views) makes the host wait for the forward pass every step."""
    loss = SCALeLoss(tiny_model, num_labels=3)
    tiny_model.train()
    with host_reads(tiny_model[0]) as reads:
        out = loss([tiny_model.tokenize(TEXTS)], LABELS)
        sum(out.values()).backward()
    assert reads == [] and set(out) == {"cross_entropy", "supcon"}
    with pytest.raises(ValueError, match="batch row 2 has label 3; expected 0..2"):
        loss([tiny_model.tokenize(TEXTS)], torch.tensor([0, 1, 3, 1, 2, 2]))


def test_ce_only_encodes_once_with_the_encoders_own_dropout(tiny_model):
    tiny_model.eval()
    loss = SCALeLoss(tiny_model, num_labels=3, supcon_weight=0.0)
    features = tiny_model.tokenize(TEXTS)
    out = loss([features], LABELS)
    embeddings = tiny_model(dict(features))["sentence_embedding"]
    assert set(out) == {"cross_entropy"}
    assert out["cross_entropy"].item() == pytest.approx(F.cross_entropy(loss.classifier(embeddings), LABELS).item())
    _, logits = loss([features], None)
    assert logits.shape == (6, 3)
    with pytest.raises(ValueError, match="row 1 has label 3"):
        loss([features], torch.tensor([0, 3, 0, 1, 2, 2]))
    with pytest.raises(ValueError, match="num_labels"):
        SCALeLoss(tiny_model)


def test_length_groups_give_the_loss_and_gradients_of_one_padded_pass(tiny_model, every_cut):
    """Each view's sentences grouped by length, each group padded to its own longest: the loss and gradients of one
    padded pass per view (views at rate 0.0, so both passes see the same network)."""
    from st_contrastive.losses.length_groups import LengthGroups

    tiny_model.train()
    texts = [*TEXTS, "Which lighthouse on the northern coast of the island was the last one built of wood ?"]
    labels = torch.tensor([0, 1, 0, 1, 2, 2, 0])
    assert len(LengthGroups.of([tiny_model.tokenize(texts)], 4).groups) > 1  # the grouped path really runs
    results = {}
    for groups in (1, 4):
        torch.manual_seed(0)  # the same new head
        loss = SCALeLoss(tiny_model, num_labels=3, supcon_weight=0.5, dropout_rates=(0.0, 0.0), length_groups=groups)
        tiny_model.zero_grad()
        out = loss([tiny_model.tokenize(texts)], labels)
        sum(out.values()).backward()
        results[groups] = (
            {k: v.detach() for k, v in out.items()},
            {name: p.grad.clone() for name, p in loss.named_parameters() if p.grad is not None},
        )
    (padded, padded_grads), (grouped, grouped_grads) = results[1], results[4]
    assert set(padded) == {"cross_entropy", "supcon"}
    for name in padded:
        torch.testing.assert_close(grouped[name], padded[name], rtol=1e-5, atol=1e-6)
    assert padded_grads.keys() == grouped_grads.keys()
    for name in padded_grads:  # sums over the tokens in another order: float noise, relative to the largest entry
        atol = max(1e-4 * padded_grads[name].abs().max().item(), 1e-6)
        torch.testing.assert_close(grouped_grads[name], padded_grads[name], rtol=1e-4, atol=atol, msg=name)
    with pytest.raises(ValueError, match="length_groups"):
        SCALeLoss(tiny_model, num_labels=3, length_groups=0)


def test_balanced_batches_keep_every_example_and_singleton_classes():
    labels = [0] * 9 + [1] * 3 + [2]  # class 2 has one example (a 1% pool of a rare class)
    dataset = Dataset.from_dict({"text": [f"s{i}" for i in range(len(labels))], "label": labels})
    sampler = ClassBalancedBatchSampler(dataset, batch_size=4, seed=1)
    epochs = []
    for epoch in range(2):
        sampler.set_epoch(epoch)
        batches = list(sampler)
        assert len(batches) == len(sampler) == 4
        assert sorted(i for batch in batches for i in batch) == list(range(len(labels)))  # once each, none dropped
        assert len({labels[i] for i in batches[0]}) == 3  # the first batch holds every class
        epochs.append(batches)
    assert epochs[0] != epochs[1]
    with pytest.raises(ValueError, match="no label column"):
        ClassBalancedBatchSampler(Dataset.from_dict({"text": ["a"]}), batch_size=2)


def test_training_on_one_percent_of_trec_through_the_entry_point(tmp_path, tiny_model):
    import csv

    from st_contrastive.data_dir import data_file
    from st_contrastive.training import LOSS_STATE_NAME, TrainSettings, train

    with open(data_file("transfer/trec.tsv"), encoding="utf-8", newline="") as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE) if r["split"] == "train"]
    pool = [rows[i] for i in torch.randperm(len(rows), generator=torch.Generator().manual_seed(0))[:55].tolist()]
    dataset = Dataset.from_dict({"text": [r["text"] for r in pool], "label": [int(r["label"]) for r in pool]})
    loss = SCALeLoss(tiny_model, num_labels=6, dropout_rates=(0.0, 0.2))
    settings = TrainSettings(
        output_dir=str(tmp_path / "run"),
        batch_size=16,
        max_steps=16,
        learning_rate=2e-3,
        warmup_ratio=0.0,
        seed=0,
        save_steps=16,
    )
    result = train(tiny_model, loss, dataset, settings, batch_sampler=ClassBalancedBatchSampler)
    losses = [row["loss"] for row in result.log_history if "loss" in row]
    assert sum(losses[-3:]) < sum(losses[:3])
    saved = torch.load(tmp_path / "run" / "checkpoint-16" / LOSS_STATE_NAME, weights_only=True)["loss"]
    assert torch.equal(saved["classifier.linear.weight"], loss.classifier.linear.weight.detach())


def test_a_normalized_model_gives_the_head_and_supcon_the_pooled_embedding(tiny_model):
    """As NLISupConLoss: a final Normalize is passed by inside the loss, term for term the loss of the same weights
    without it, and the model still normalises outside."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize

    tiny_model.eval()  # one view, no dropout: the two models' passes are the same
    normalized = SentenceTransformer(modules=[*tiny_model, Normalize()], device="cpu").eval()
    loss = SCALeLoss(normalized, num_labels=3, supcon_weight=0.5, similarity="dot")
    pooled = SCALeLoss(tiny_model, classifier=loss.classifier, supcon_weight=0.5, similarity="dot")
    features = tiny_model.tokenize(TEXTS)
    terms, expected = loss([dict(features)], LABELS), pooled([dict(features)], LABELS)
    assert terms.keys() == expected.keys() == {"cross_entropy", "supcon"}
    for name in terms:
        torch.testing.assert_close(terms[name], expected[name])
    unit = normalized(dict(features))["sentence_embedding"]
    torch.testing.assert_close(unit.norm(dim=-1), torch.ones(len(TEXTS)))
