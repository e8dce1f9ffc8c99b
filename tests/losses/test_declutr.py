"""DeCLUTRLoss on the collator's batches: one forward pass, the MLM head, ablations (the collator's own span layout and
masking rules are tests/data/test_declutr_collator.py's)."""

import pytest
import torch
import torch.nn.functional as F
from declutr_batches import documents, span_collator, unmasked
from transformers import AutoModelForMaskedLM

from st_contrastive.data import DeCLUTRDataCollator, SpanSampler
from st_contrastive.losses import DeCLUTRLoss, nt_xent


@pytest.fixture()
def collator(tiny_model):
    return span_collator(tiny_model.tokenizer)


def run_loss(loss, batch):
    features = [
        {k[len("anchor_") :]: v for k, v in batch.items() if k.startswith("anchor_")},
        {k[len("positive_") :]: v for k, v in batch.items() if k.startswith("positive_")},
    ]
    return loss(features, None)


def count_encoded_rows(model):
    rows = []
    handle = model[0].register_forward_pre_hook(lambda _, args: rows.append(len(args[0]["input_ids"])))
    return rows, handle


def test_training_encodes_each_span_once_and_returns_both_terms(tiny_model, collator):
    """MLM reads the anchors' own forward pass: every anchor and positive goes through the encoder once (in length
    groups, see test_length_groups.py), and nothing more."""
    loss = DeCLUTRLoss(tiny_model)
    tiny_model.train()
    rows, handle = count_encoded_rows(tiny_model)
    batch = collator(documents(2))
    out = run_loss(loss, batch)
    handle.remove()
    assert set(out) == {"contrastive", "mlm"}
    assert sum(rows) == len(batch["anchor_input_ids"]) + len(batch["positive_input_ids"])
    assert all(torch.isfinite(v) for v in out.values())
    sum(out.values()).backward()
    assert loss.mlm_head.masked_lm.cls.predictions.transform.dense.weight.grad is not None


def test_a_training_step_reads_no_tensor_back_to_the_host(tiny_model, collator, host_reads):
    """On a GPU, int(), float(), bool() or .item() of a tensor in the step makes the host wait for the device every
    step (issue 28 found ``int(masked.sum())`` in the MLM term). Reading a tensor's value on the CPU goes through the
    same calls, so the package's code in the step must make none of them once the encoder runs (transformers' own
    are not ours to fix); the spans' lengths and masked positions are read when the batch arrives."""
    loss = DeCLUTRLoss(tiny_model)
    tiny_model.train()
    batch = collator(documents(2))
    with host_reads(tiny_model) as reads:  # the lengths and masked positions are read before the encoder runs
        out = run_loss(loss, batch)
        sum(out.values()).backward()
    assert reads == [] and set(out) == {"contrastive", "mlm"}


def test_under_matryoshka_the_lengths_and_masked_positions_are_read_once_per_batch(tiny_model, collator, host_reads):
    """MatryoshkaLoss calls the loss again per size after the encoder ran: the length groups are made once per batch,
    so no size reads the spans' lengths (a GPU wait each) again."""
    from sentence_transformers.sentence_transformer.losses import MatryoshkaLoss

    tiny_model.train()
    loss = MatryoshkaLoss(tiny_model, DeCLUTRLoss(tiny_model), [32, 16, 8])
    batch = collator(documents(2))
    features = [
        {k[len("anchor_") :]: v for k, v in batch.items() if k.startswith("anchor_")},
        {k[len("positive_") :]: v for k, v in batch.items() if k.startswith("positive_")},
    ]
    with host_reads(tiny_model[0]) as reads:
        out = loss(features, None)
        sum(out.values()).backward()
    assert reads == [] and set(out) == {"contrastive", "mlm"}


def test_without_mlm_anchors_are_restored_and_nt_xent_is_of_clean_spans(tiny_model, collator):
    loss = DeCLUTRLoss(tiny_model, temperature=0.1, mlm_weight=0)
    batch = collator(documents(2))  # masked by the collator, but this loss trains no MLM
    tiny_model.eval()
    with torch.no_grad():
        out = run_loss(loss, batch)
        clean = tiny_model({"input_ids": unmasked(batch), "attention_mask": batch["anchor_attention_mask"]})
        clean = clean["sentence_embedding"]
        positives = tiny_model({k[9:]: v for k, v in batch.items() if k.startswith("positive_")})["sentence_embedding"]
        expected = nt_xent(clean, positives.view(4, 3, -1).mean(1), 0.1)
    assert set(out) == {"contrastive"}
    assert out["contrastive"].item() == pytest.approx(expected.item(), abs=1e-5)


def test_evaluation_computes_the_training_objective(tiny_model, collator):
    loss = DeCLUTRLoss(tiny_model, temperature=0.1)
    batch = collator(documents(2))
    tiny_model.eval()
    with torch.no_grad():
        out = run_loss(loss, batch)
        masked = tiny_model({k[7:]: v for k, v in batch.items() if k.startswith("anchor_") and "mlm" not in k})
        positives = tiny_model({k[9:]: v for k, v in batch.items() if k.startswith("positive_")})["sentence_embedding"]
        expected = nt_xent(masked["sentence_embedding"], positives.view(4, 3, -1).mean(1), 0.1)
        mlm = loss.mlm_head(masked["token_embeddings"], batch["anchor_mlm_labels"])
    assert set(out) == {"contrastive", "mlm"}
    assert out["contrastive"].item() == pytest.approx(expected.item(), abs=1e-5)
    assert out["mlm"].item() == pytest.approx(mlm.item(), abs=1e-5)


def test_ablations(tiny_model, collator):
    tiny_model.train()
    batch = collator(documents(2))
    contrastive_only = run_loss(DeCLUTRLoss(tiny_model, mlm_weight=0), batch)
    assert set(contrastive_only) == {"contrastive"}
    mlm_only = DeCLUTRLoss(tiny_model, contrastive_weight=0)
    rows, handle = count_encoded_rows(tiny_model)
    out = run_loss(mlm_only, batch)
    handle.remove()
    assert set(out) == {"mlm"} and sum(rows) == len(batch["anchor_input_ids"])  # no positive is encoded
    with pytest.raises(ValueError, match="leave nothing to train"):
        DeCLUTRLoss(tiny_model, contrastive_weight=0, mlm_weight=0)


def test_mlm_head_comes_from_the_checkpoint_and_matches_bert(tiny_model, tiny_mlm_dir):
    loss = DeCLUTRLoss(tiny_model)
    head = loss.mlm_head
    assert head.pretrained
    reference = AutoModelForMaskedLM.from_pretrained(tiny_mlm_dir)
    assert torch.equal(
        head.masked_lm.cls.predictions.transform.dense.weight, reference.cls.predictions.transform.dense.weight
    )
    assert head.masked_lm.get_output_embeddings().weight is tiny_model[0].auto_model.get_input_embeddings().weight
    torch.manual_seed(0)
    hidden = torch.randn(2, 7, 32)
    labels = torch.full((2, 7), -100)
    labels[0, 2], labels[1, 5], labels[1, 6] = 11, 42, 7
    expected = F.cross_entropy(reference.cls(hidden).view(-1, reference.config.vocab_size), labels.view(-1))
    assert head(hidden, labels).item() == pytest.approx(expected.item(), abs=1e-5)


def test_new_head_when_the_checkpoint_has_none(tmp_path, tiny_model, caplog, capsys):
    # A plain encoder checkpoint (as all-MiniLM-L6-v2 ships) has no MLM head: a new one, tied to the embeddings.
    tiny_model.save(str(tmp_path))
    from sentence_transformers import SentenceTransformer

    plain = SentenceTransformer(str(tmp_path), device="cpu")
    plain[0].auto_model.config.name_or_path = str(tmp_path)
    capsys.readouterr()
    with caplog.at_level("INFO"):
        head = DeCLUTRLoss(plain).mlm_head
    printed = caplog.text + "".join(capsys.readouterr())
    assert not head.pretrained
    assert "has no MLM head: a new one was initialised" in printed  # one line instead of transformers' report
    assert "LOAD REPORT" not in printed and "corrupted" not in printed and "MISSING" not in printed
    assert head.masked_lm.get_output_embeddings().weight is plain[0].auto_model.get_input_embeddings().weight


def test_a_new_head_sits_where_the_encoder_is(tmp_path, tiny_model):
    # On an H200 a new head stayed on the CPU under an encoder on the GPU, and the first step failed; the CPU's
    # analogue is the dtype: an encoder in float64 gets a head in float64, tied to its embeddings.
    tiny_model.save(str(tmp_path))
    from sentence_transformers import SentenceTransformer

    plain = SentenceTransformer(str(tmp_path), device="cpu").to(torch.float64)
    plain[0].auto_model.config.name_or_path = str(tmp_path)
    head = DeCLUTRLoss(plain).mlm_head
    assert not head.pretrained
    assert {(p.device.type, p.dtype) for p in head.parameters()} == {("cpu", torch.float64)}
    assert head.masked_lm.get_output_embeddings().weight is plain[0].auto_model.get_input_embeddings().weight


def test_save_masked_lm_round_trip(tmp_path, tiny_model):
    loss = DeCLUTRLoss(tiny_model)
    loss.save_masked_lm(str(tmp_path))
    reloaded = AutoModelForMaskedLM.from_pretrained(str(tmp_path))
    assert torch.equal(
        reloaded.cls.predictions.transform.dense.weight, loss.mlm_head.masked_lm.cls.predictions.transform.dense.weight
    )
    assert torch.equal(
        reloaded.bert.embeddings.word_embeddings.weight, tiny_model[0].auto_model.get_input_embeddings().weight
    )


def test_tokenizer_without_mask_token(tiny_model):
    tiny_model.tokenizer.mask_token = None
    with pytest.raises(ValueError, match="no mask token"):
        DeCLUTRLoss(tiny_model)
    with pytest.raises(ValueError, match="no mask token"):
        DeCLUTRDataCollator(tiny_model.tokenizer)
    assert set(DeCLUTRLoss(tiny_model, mlm_weight=0).get_config_dict()) == {
        "temperature",
        "contrastive_weight",
        "mlm_weight",
        "gather_across_devices",
        "length_groups",
    }


def test_a_single_anchor_warns_once_that_nt_xent_is_zero(tiny_model, caplog):
    sampler = SpanSampler(num_anchors=1, num_positives=2, min_length=8, max_length=32)
    loss = DeCLUTRLoss(tiny_model, mlm_weight=0)
    batch = DeCLUTRDataCollator(tiny_model.tokenizer, sampler, mlm_probability=0)(documents(1))
    with caplog.at_level("WARNING"):
        first, second = run_loss(loss, batch), run_loss(loss, batch)
    assert first["contrastive"].item() == pytest.approx(0.0, abs=1e-6) and second["contrastive"].item() < 1e-6
    assert caplog.text.count("NT-Xent has no negative") == 1
