"""DeCLUTRDataCollator: span layout, masking rules, seeding per epoch, randomness that does not depend on DataLoader
workers, and bad input caught before training."""

import pytest
import torch
from declutr_batches import documents, span_collator, unmasked
from torch.utils.data import DataLoader

from st_contrastive.data import (
    DeCLUTRDataCollator,
    Span,
    SpanSampler,
    load_documents,
    placement,
    prepare_declutr_dataset,
)
from st_contrastive.data_dir import data_file


@pytest.fixture()
def collator(tiny_model):
    return span_collator(tiny_model.tokenizer)


def wiki_documents(model, sampler, limit=12):
    """The first ``limit`` shared Wikipedia articles, tokenized for ``sampler``."""
    return prepare_declutr_dataset(
        load_documents(data_file("corpus/docs.jsonl.gz"), limit=limit), model.tokenizer, sampler
    )


def span_of(row_ids, attention, offset):
    tokens = row_ids[1 : int(attention.sum()) - 1]  # drop [CLS] and [SEP]
    assert torch.equal(tokens, torch.arange(tokens[0], tokens[0] + len(tokens)))
    return Span(int(tokens[0]) - offset, int(tokens[0]) - offset + len(tokens))


def test_layout_anchors_then_their_positives(collator):
    docs = documents(3)
    batch = collator(docs)
    anchors = unmasked(batch)
    assert anchors.shape[0] == 3 * 2 and batch["positive_input_ids"].shape[0] == 3 * 2 * 3
    cls_id, sep_id = collator.tokenizer.cls_token_id, collator.tokenizer.sep_token_id
    assert (batch["anchor_input_ids"][:, 0] == cls_id).all()
    for i in range(6):
        offset = 100 + i // 2
        anchor = span_of(anchors[i], batch["anchor_attention_mask"][i], offset)
        assert anchors[i][int(batch["anchor_attention_mask"][i].sum()) - 1] == sep_id
        for p in range(3):
            row = i * 3 + p
            positive = span_of(batch["positive_input_ids"][row], batch["positive_attention_mask"][row], offset)
            assert placement(anchor, positive) in {"adjacent", "subsumed", "overlapping"}


def test_masking_rules(collator):
    batch = collator(documents(3) * 20)
    ids, labels, attention = batch["anchor_input_ids"], batch["anchor_mlm_labels"], batch["anchor_attention_mask"]
    original = unmasked(batch)
    special = torch.isin(original, torch.tensor(collator.tokenizer.all_special_ids))
    chosen = labels != -100
    assert not (chosen & special).any(), "special tokens must never be masked"
    assert not (chosen & (attention == 0)).any()
    rate = chosen.sum() / (~special).sum()
    assert rate.item() == pytest.approx(0.15, abs=0.02)
    as_mask = (ids[chosen] == collator.tokenizer.mask_token_id).float().mean().item()
    kept = (ids[chosen] == original[chosen]).float().mean().item()
    assert as_mask == pytest.approx(0.8, abs=0.04)
    assert kept == pytest.approx(0.1, abs=0.03)
    assert torch.equal(ids[~chosen], original[~chosen])
    assert "positive_mlm_labels" not in batch


def test_seeded_per_epoch(collator, tiny_model):
    docs = documents(2)
    first = collator(docs)
    again = DeCLUTRDataCollator(tiny_model.tokenizer, collator.span_sampler, seed=0)(docs)
    assert torch.equal(first["anchor_input_ids"], again["anchor_input_ids"])
    other = DeCLUTRDataCollator(tiny_model.tokenizer, collator.span_sampler, seed=0)
    other.set_epoch(1)
    assert not torch.equal(unmasked(other(docs))[:, :10], unmasked(first)[:, :10])


def test_collator_without_mlm_has_no_labels(tiny_model):
    batch = DeCLUTRDataCollator(tiny_model.tokenizer, SpanSampler(max_length=32), mlm_probability=0)(documents(1))
    assert "anchor_mlm_labels" not in batch


def test_spans_do_not_depend_on_workers_and_persistent_workers_see_the_epoch(tiny_model):
    sampler = SpanSampler(num_anchors=2, num_positives=1, min_length=8, max_length=48)
    dataset = wiki_documents(tiny_model, sampler, limit=8)
    collator = DeCLUTRDataCollator(tiny_model.tokenizer, sampler, seed=0)

    def epoch_batches(loader):
        return [batch["anchor_input_ids"] for batch in loader]

    in_process = DataLoader(dataset, batch_size=2, collate_fn=collator)
    workers = DataLoader(dataset, batch_size=2, collate_fn=collator, num_workers=2, persistent_workers=True)
    epoch0 = epoch_batches(in_process)
    assert all(torch.equal(a, b) for a, b in zip(epoch0, epoch_batches(workers)))
    collator.set_epoch(1)
    epoch1 = epoch_batches(in_process)
    assert all(torch.equal(a, b) for a, b in zip(epoch1, epoch_batches(workers)))
    assert not any(a.shape == b.shape and torch.equal(a, b) for a, b in zip(epoch0, epoch1))


def test_bad_corpus_and_tokenizer_are_named(tmp_path, tiny_model):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(ValueError, match="empty.jsonl: no documents in the file"):
        load_documents(empty)
    tiny_model.tokenizer.pad_token = None
    with pytest.raises(ValueError, match="has no pad token"):
        DeCLUTRDataCollator(tiny_model.tokenizer)


def test_longest_span_leaves_room_for_the_special_tokens(tiny_model):
    """The one rule the command and the recipe fit span lengths with: the model's input limit less [CLS] and [SEP]."""
    from st_contrastive.data import longest_span

    tiny_model[0].max_seq_length = 40
    assert tiny_model.tokenizer("a")["input_ids"][0] == tiny_model.tokenizer.cls_token_id
    fits, why = longest_span(tiny_model)
    assert fits == 38 and why == "max_seq_length 40, less 2 special tokens"
    positions = tiny_model[0].auto_model.embeddings.position_embeddings.num_embeddings
    tiny_model[0].max_seq_length = positions + 100  # the position embeddings are the tighter limit then
    assert longest_span(tiny_model)[0] == positions - 2
