"""NLI data, premise-group batching and NLISupConLoss: parity with SoftmaxLoss, selection rules, training."""

import math

import pytest
import torch
from sentence_transformers.sentence_transformer.evaluation import LabelAccuracyEvaluator
from sentence_transformers.sentence_transformer.losses import SoftmaxLoss
from sentence_transformers.sentence_transformer.training_args import SentenceTransformerTrainingArguments

from st_contrastive.data.nli import label_id, load_nli
from st_contrastive.data.premise_group_sampler import PremiseGroupBatchSampler
from st_contrastive.losses.nli_supcon import NLISupConLoss, premise_groups
from st_contrastive.models import NLIClassifier, load_nli_classifier, predict_nli
from st_contrastive.training import LOSS_STATE_NAME, ContrastiveTrainer


def test_shared_snli_reader():
    dev = load_nli("snli-dev")
    assert len(dev) == 9842 and dev.column_names == ["premise", "hypothesis", "label"]
    assert sorted(set(dev["label"])) == [0, 1, 2]
    assert dev["label"].count(0) == 3329  # entailment count from SOURCES.md
    assert len(load_nli("snli-dev+snli-test", max_rows=10)) == 20


def test_bad_and_missing_labels_are_reported(tmp_path, caplog):
    path = tmp_path / "pairs.tsv"
    path.write_text("premise\thypothesis\tlabel\nA dog .\tAn animal .\tentailment\nA cat .\tA dog .\t-\n")
    with caplog.at_level("WARNING"):
        assert load_nli(str(path))["label"] == [0]
    assert "dropped 1 pairs without a gold label" in caplog.text
    path.write_text("sentence1\tsentence2\tgold_label\nA .\tB .\tNEUTRAL\nA .\tC .\tmaybe\n")
    with pytest.raises(ValueError, match=r"pairs.tsv, row 2: unknown NLI label 'maybe'"):
        load_nli(str(path))
    assert label_id(2) == 2 and label_id("Contradiction") == 2


def test_sampler_keeps_groups_and_covers_every_row_once():
    dataset = load_nli("snli-dev", max_rows=300)
    sampler = PremiseGroupBatchSampler(dataset, batch_size=16, seed=3)
    premises = dataset["premise"]
    epochs = []
    for epoch in range(2):
        sampler.set_epoch(epoch)
        batches = list(sampler)
        assert len(batches) == len(sampler)
        rows = [i for batch in batches for i in batch]
        assert sorted(rows) == list(range(len(dataset)))
        for batch in batches:
            assert len(batch) <= 16
            for premise in {premises[i] for i in batch}:
                assert all(premises[i] != premise for other in batches if other is not batch for i in other)
        epochs.append(batches)
    assert epochs[0] != epochs[1]


def nli_features(model, rows):
    return [model.tokenize([r[0] for r in rows]), model.tokenize([r[1] for r in rows])]


ROWS = [
    ("A dog runs .", "An animal moves .", 0),
    ("A dog runs .", "A cat sleeps .", 2),
    ("A dog runs .", "The dog is fast .", 1),
    ("A man cooks .", "Someone makes food .", 0),
    ("A man cooks .", "A woman swims .", 2),
]


def test_lambda_zero_equals_softmax_loss(tiny_model):
    tiny_model.eval()
    ours = NLISupConLoss(tiny_model, supcon_weight=0.0)
    reference = SoftmaxLoss(tiny_model, tiny_model.get_embedding_dimension(), num_labels=3)
    reference.classifier.load_state_dict(ours.classifier.linear.state_dict())
    labels = torch.tensor([r[2] for r in ROWS])
    out = ours(nli_features(tiny_model, ROWS), labels)
    assert set(out) == {"cross_entropy"}
    expected = reference(nli_features(tiny_model, ROWS), labels)
    assert out["cross_entropy"].item() == pytest.approx(expected.item(), abs=1e-6)


def test_length_groups_give_the_loss_and_gradients_of_one_padded_pass(tiny_model, every_cut):
    tiny_model.eval()  # no dropout: both passes see the same network
    rows = ROWS + [("A woman in a red coat waits for the late bus at the corner .", "A person waits .", 0)]
    labels = torch.tensor([r[2] for r in rows])
    results = {}
    for groups in (1, 4):
        torch.manual_seed(0)
        loss = NLISupConLoss(tiny_model, supcon_weight=0.5, length_groups=groups)
        tiny_model.zero_grad()
        out = loss(nli_features(tiny_model, rows), labels)
        sum(out.values()).backward()
        results[groups] = (
            {k: v.detach() for k, v in out.items()},
            {name: p.grad.clone() for name, p in tiny_model.named_parameters() if p.grad is not None},
        )
    (padded, padded_grads), (grouped, grouped_grads) = results[1], results[4]
    for name in padded:
        torch.testing.assert_close(grouped[name], padded[name], rtol=1e-5, atol=1e-6)
    for name in padded_grads:  # sums over the tokens in another order: float noise, relative to the largest entry
        atol = max(1e-4 * padded_grads[name].abs().max().item(), 1e-6)
        torch.testing.assert_close(grouped_grads[name], padded_grads[name], rtol=1e-4, atol=atol, msg=name)


def test_premise_supcon_hand_computed(tiny_model):
    loss = NLISupConLoss(tiny_model, supcon_weight=1.0, temperature=1.0, similarity="dot")
    premises = torch.tensor([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    hypotheses = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [0.0, 1.0], [1.0, 0.0]])
    group = torch.tensor([0, 0, 0, 1, 1])
    labels = torch.tensor([0, 2, 1, 0, 2])
    # Premise 0 (1,0): scores to the 5 hypotheses 1, 0, .5, 0, 1; its only positive is hypothesis 0.
    # Premise 1 (0,1): scores 0, 1, .5, 1, 0; its only positive is hypothesis 3.
    denominator = 2 * math.e + math.exp(0.5) + 2
    expected = -(1 - math.log(denominator) + 1 - math.log(denominator)) / 2
    groups = loss.premise_groups_of([], group, labels)  # counts the anchors, from the labels alone
    assert loss.premise_supcon(premises, hypotheses, groups, labels).item() == pytest.approx(expected, abs=1e-6)
    assert loss.anchors_seen == 2 and loss.anchors_without_positive == 0


def test_k_selection_keeps_exactly_k_where_available(tiny_model):
    loss = NLISupConLoss(tiny_model, positives=1, negatives=3, seed=0)
    mask = torch.tensor([[True, True, True, True, True, False], [False, True, False, False, False, False]])
    for _ in range(20):
        chosen = loss._keep_at_most(mask, 3)
        assert (chosen & ~mask).sum() == 0
        assert chosen.sum(dim=1).tolist() == [3, 1]
    assert torch.equal(loss._keep_at_most(mask, "all"), mask)
    with pytest.raises(ValueError, match="negatives"):
        NLISupConLoss(tiny_model, negatives=0)


def test_groups_from_premise_tokens(tiny_model):
    features = nli_features(tiny_model, ROWS)
    assert premise_groups(features[0]["input_ids"]).tolist() in ([0, 0, 0, 1, 1], [1, 1, 1, 0, 0])


def test_a_normalized_model_trains_its_head_on_the_pooled_embedding(tiny_model, tmp_path):
    """A model that ends in Normalize (as all-MiniLM-L6-v2 does) gives the head and SupCon the embedding its Pooling
    made: the loss equals the loss of the same weights without the Normalize, term for term, and differs from the
    loss of unit vectors. Outside the loss the model still normalises, and the checkpoint it saves keeps its
    modules and encodes unit vectors."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize

    normalized = SentenceTransformer(modules=[*tiny_model, Normalize()], device="cpu")
    features = nli_features(tiny_model, ROWS)
    labels = torch.tensor([row[2] for row in ROWS])
    torch.manual_seed(0)
    loss = NLISupConLoss(normalized, supcon_weight=0.5, similarity="dot")
    pooled = NLISupConLoss(tiny_model, classifier=loss.classifier, supcon_weight=0.5, similarity="dot")
    seen = []
    loss.classifier.register_forward_pre_hook(lambda head, args: seen.append(args[0].detach()))
    terms = loss([dict(f) for f in features], labels)
    expected = pooled([dict(f) for f in features], labels)
    assert terms.keys() == expected.keys() == {"cross_entropy", "supcon"}
    for name in terms:
        torch.testing.assert_close(terms[name], expected[name])
    norms = seen[0].norm(dim=-1)
    assert not torch.allclose(norms, torch.ones_like(norms))  # the head read pooled, unnormalised embeddings
    unit = SentenceTransformer(modules=[*tiny_model, Normalize(), Normalize()], device="cpu")  # a Normalize stays
    unit_terms = NLISupConLoss(unit, classifier=loss.classifier, supcon_weight=0.5, similarity="dot")(
        [dict(f) for f in features], labels
    )
    assert not torch.allclose(unit_terms["cross_entropy"], terms["cross_entropy"])
    embedding = normalized(dict(features[0]))["sentence_embedding"]
    torch.testing.assert_close(embedding.norm(dim=-1), torch.ones(len(ROWS)))  # the hooks are gone

    args = SentenceTransformerTrainingArguments(
        output_dir=str(tmp_path / "checkpoints"),
        max_steps=2,
        per_device_train_batch_size=6,
        report_to=[],
        batch_sampler=PremiseGroupBatchSampler,
    )
    dataset = load_nli("snli-dev", max_rows=12)
    ContrastiveTrainer(model=normalized, args=args, train_dataset=dataset, loss=loss).train()
    normalized.save(str(tmp_path / "saved"))
    saved = SentenceTransformer(str(tmp_path / "saved"), device="cpu")
    assert [type(module).__name__ for module in saved] == ["Transformer", "Pooling", "Normalize"]
    vectors = saved.encode(["A dog runs.", "Someone makes food."], convert_to_tensor=True)
    torch.testing.assert_close(vectors.norm(dim=-1), torch.ones(2))


def test_no_positive_gives_zero_with_warning(tiny_model, caplog):
    loss = NLISupConLoss(tiny_model, supcon_weight=0.5)
    rows = [r for r in ROWS if r[2] != 0]
    tiny_model.train()
    with caplog.at_level("WARNING"):
        out = loss(nli_features(tiny_model, rows), torch.tensor([r[2] for r in rows]))
    assert out["supcon"].item() == 0.0 and "no premise" in caplog.text.lower()
    with pytest.raises(ValueError, match="row 0 has label 5"):
        loss(nli_features(tiny_model, rows), torch.tensor([5, 0, 1]))


def test_a_training_step_reads_nothing_back_to_the_host_once_the_encoder_runs(tiny_model, host_reads):
    """The labels are checked and the anchors counted from the batch before the encoder runs: on a GPU a read after
    it would make the host wait for the forward pass every step."""
    loss = NLISupConLoss(tiny_model, supcon_weight=0.5)
    tiny_model.train()
    features, labels = nli_features(tiny_model, ROWS), torch.tensor([r[2] for r in ROWS])
    with host_reads(tiny_model[0]) as reads:
        out = loss(features, labels)
        sum(out.values()).backward()
    assert reads == [] and set(out) == {"cross_entropy", "supcon"}
    assert (loss.anchors_seen, loss.anchors_without_positive) == (2, 0)


def test_under_matryoshka_the_premise_groups_are_read_once_per_batch(tiny_model, host_reads):
    # MatryoshkaLoss calls the loss once per size on the same batch, after the encoder ran: reading the groups again
    # at each size made one wait for a GPU per extra size, and counted the anchors once per size.
    from sentence_transformers.sentence_transformer.losses import MatryoshkaLoss

    loss = NLISupConLoss(tiny_model, supcon_weight=0.5)
    features, labels = nli_features(tiny_model, ROWS), torch.tensor([r[2] for r in ROWS])
    with host_reads(tiny_model[0]) as reads:
        sum(MatryoshkaLoss(tiny_model, loss, [32, 16, 8])(features, labels).values()).backward()
    assert reads == [] and (loss.anchors_seen, loss.anchors_without_positive) == (2, 0)
    MatryoshkaLoss(tiny_model, loss, [32, 16, 8])(nli_features(tiny_model, ROWS), labels)  # a new batch: counted
    assert loss.anchors_seen == 4


def test_training_falls_saves_head_and_label_accuracy_works(tmp_path, tiny_model):
    dataset = load_nli("snli-dev", max_rows=192)
    loss = NLISupConLoss(tiny_model, supcon_weight=0.3)
    args = SentenceTransformerTrainingArguments(
        output_dir=str(tmp_path / "run"),
        per_device_train_batch_size=16,
        max_steps=30,
        learning_rate=2e-3,
        logging_steps=1,
        save_steps=30,
        report_to="none",
        seed=0,
        disable_tqdm=True,
        batch_sampler=PremiseGroupBatchSampler,
    )
    trainer = ContrastiveTrainer(model=tiny_model, args=args, train_dataset=dataset, loss=loss)
    trainer.train()
    history = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    assert sum(history[-5:]) / 5 < sum(history[:5]) / 5
    assert loss.anchors_seen > 0 and loss.anchors_without_positive < loss.anchors_seen
    saved = torch.load(tmp_path / "run" / "checkpoint-30" / LOSS_STATE_NAME, weights_only=True)["loss"]
    assert torch.equal(saved["classifier.linear.weight"], loss.classifier.linear.weight.detach())

    loss.save_classifier(tmp_path / "head")
    classifier = load_nli_classifier(tmp_path / "head")
    assert isinstance(classifier, NLIClassifier)
    assert classifier.labels == ["entailment", "neutral", "contradiction"]
    assert torch.equal(classifier.linear.weight, loss.classifier.linear.weight.detach())

    # The exported head on model.encode(...) predicts what the loss's own head gives on the trainer's features.
    tiny_model.eval()
    rows = [(r["premise"], r["hypothesis"], r["label"]) for r in dataset.select(range(32))]
    with torch.no_grad():
        _, logits = loss(nli_features(tiny_model, rows), None)
    expected = [classifier.labels[i] for i in logits.argmax(dim=1).tolist()]
    assert predict_nli(tiny_model, classifier, [r[0] for r in rows], [r[1] for r in rows]) == expected

    from sentence_transformers.sentence_transformer.readers.input_example import InputExample
    from torch.utils.data import DataLoader

    examples = [InputExample(texts=[r[0], r[1]], label=r[2]) for r in rows]
    loader = DataLoader(examples, batch_size=8, collate_fn=tiny_model.smart_batching_collate)
    accuracy = LabelAccuracyEvaluator(loader, softmax_model=loss)(tiny_model)
    by_hand = sum(classifier.labels.index(p) == r[2] for p, r in zip(expected, rows)) / len(rows)
    assert next(v for k, v in accuracy.items() if "accuracy" in k) == pytest.approx(by_hand)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("premise\thypothesis\tlabel\nA dog .\t\tentailment\n", r"pairs.tsv, row 1: no hypothesis text"),
        (
            "premise\thypothesis\tlabel\nA dog .\tAn animal .\t-\nA cat .\tA pet .\t-\n",
            r"pairs.tsv: none of its 2 rows has a gold label",
        ),
        ("premise\thypothesis\n", r"pairs.tsv: no rows"),
    ],
)
def test_bad_nli_files_name_the_file_and_row(tmp_path, content, message):
    path = tmp_path / "pairs.tsv"
    path.write_text(content)
    with pytest.raises(ValueError, match=message):
        load_nli(str(path))


def test_missing_and_list_labels_are_named(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text('{"premise": "A dog .", "hypothesis": "An animal .", "label": ["entailment", "neutral"]}\n')
    with pytest.raises(ValueError, match=r"pairs.jsonl, row 1: the label is a list"):
        load_nli(str(path))
    path.write_text(
        '{"premise": "A dog .", "hypothesis": "An animal .", "label": 0}\n'
        '{"premise": "A cat .", "hypothesis": "A pet .", "label": null}\n'
    )
    with pytest.raises(ValueError, match=r"pairs.jsonl, row 2: no label"):
        load_nli(str(path))


def test_resume_restores_the_selection_generator_and_counters(tmp_path, tiny_mlm_dir):
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

    dataset = load_nli("snli-dev", max_rows=96)

    def trainer(output_dir, save_steps=6):
        torch.manual_seed(0)
        model = SentenceTransformer(modules=[Transformer(tiny_mlm_dir, max_seq_length=64), Pooling(32)], device="cpu")
        args = SentenceTransformerTrainingArguments(
            output_dir=str(output_dir),
            per_device_train_batch_size=16,
            max_steps=6,
            learning_rate=1e-3,
            save_steps=save_steps,
            report_to="none",
            seed=0,
            disable_tqdm=True,
            batch_sampler=PremiseGroupBatchSampler,
        )
        loss = NLISupConLoss(model, supcon_weight=0.5, positives=1, negatives=1, seed=3)
        return ContrastiveTrainer(model=model, args=args, train_dataset=dataset, loss=loss)

    straight = trainer(tmp_path / "straight")
    straight.train()
    trainer(tmp_path / "interrupted", save_steps=3).train()
    resumed = trainer(tmp_path / "resumed")
    resumed.train(resume_from_checkpoint=str(tmp_path / "interrupted" / "checkpoint-3"))
    for key, value in straight.model.state_dict().items():
        assert torch.equal(resumed.model.state_dict()[key], value), key
    assert torch.equal(resumed.loss.classifier.linear.weight, straight.loss.classifier.linear.weight)
    assert torch.equal(resumed.loss.generator.get_state(), straight.loss.generator.get_state())
    assert (resumed.loss.anchors_seen, resumed.loss.anchors_without_positive) == (
        straight.loss.anchors_seen,
        straight.loss.anchors_without_positive,
    )


@pytest.mark.parametrize("similarity", ["cosine", "dot"])
def test_premise_supcon_equals_pytorch_metric_learning_with_reference_embeddings(tiny_model, similarity):
    from pytorch_metric_learning.distances import CosineSimilarity, DotProductSimilarity
    from pytorch_metric_learning.losses import SupConLoss as PMLSupConLoss

    torch.manual_seed(4)
    group = torch.tensor([0, 0, 0, 1, 1, 2, 2, 2, 2, 3, 3, 3])
    labels = torch.tensor([0, 1, 2, 0, 0, 2, 0, 1, 0, 1, 2, 2])  # premise 3 has no entailed hypothesis
    premises = torch.randn(4, 8)[group]
    hypotheses = torch.randn(12, 8)
    loss = NLISupConLoss(tiny_model, supcon_weight=1.0, temperature=0.5, similarity=similarity)
    ours = loss.premise_supcon(premises, hypotheses, loss.premise_groups_of([], group, labels), labels)

    positive = (group[None, :] == torch.arange(4)[:, None]) & (labels[None, :] == 0)
    a1, p = positive.nonzero(as_tuple=True)
    a2, n = (~positive).nonzero(as_tuple=True)
    distance = CosineSimilarity() if similarity == "cosine" else DotProductSimilarity(normalize_embeddings=False)
    reference = PMLSupConLoss(temperature=0.5, distance=distance)(
        premises[[0, 3, 5, 9]], indices_tuple=(a1, p, a2, n), ref_emb=hypotheses
    )
    assert ours.item() == pytest.approx(reference.item(), abs=1e-5)
    assert loss.anchors_without_positive == 1


def test_premises_are_grouped_by_text_with_the_collator(tiny_model):
    from st_contrastive.data import PremiseGroupDataCollator

    rows = [
        {"premise": "A dog runs .", "hypothesis": "An animal moves .", "label": 0},
        {"premise": "a DOG runs .", "hypothesis": "A cat sleeps .", "label": 0},  # same tokens, uncased
        {"premise": "a DOG runs .", "hypothesis": "Nothing moves .", "label": 2},
    ]
    batch = PremiseGroupDataCollator(tiny_model.preprocess)(rows)
    assert batch["premise_group"].tolist() == [0, 1, 1]
    features = [
        {k[len(c) + 1 :]: v for k, v in batch.items() if k.startswith(c + "_")} for c in ("premise", "hypothesis")
    ]
    assert torch.equal(features[0]["input_ids"][0], features[0]["input_ids"][1])  # token ids cannot tell them apart
    by_text, by_tokens = NLISupConLoss(tiny_model, supcon_weight=0.5), NLISupConLoss(tiny_model, supcon_weight=0.5)
    by_text(features, batch["label"])
    by_tokens([{k: v for k, v in f.items() if k != "group"} for f in features], batch["label"])
    assert (by_text.anchors_seen, by_tokens.anchors_seen) == (2, 1)
