"""MLM pretraining of a small BERT: tokenizer, loss going down, reloadable checkpoint, time guard, CLI."""

from __future__ import annotations

import json

import pytest
import torch
from transformers import AutoModelForMaskedLM, AutoTokenizer

from st_contrastive.commands.pretrain_mlm import main as pretrain_mlm_main
from st_contrastive.pretraining import pretrain_masked_lm, train_wordpiece_tokenizer

# Small enough for seconds on one CPU core, large enough for the loss to move in a few dozen steps.
TINY = {
    "vocab_size": 1000, "hidden_size": 64, "num_layers": 2, "num_heads": 2, "max_seq_length": 64, "batch_size": 16,
    "learning_rate": 2e-3,
}  # fmt: skip


@pytest.fixture(scope="module")
def pretrained(tmp_path_factory, wiki_texts):
    output_dir = tmp_path_factory.mktemp("mlm")
    results = pretrain_masked_lm(wiki_texts[:50], output_dir, max_steps=40, eval_blocks=64, **TINY)
    return output_dir, results


def test_tokenizer_round_trips_text_and_has_mask(wiki_texts):
    tokenizer = train_wordpiece_tokenizer(wiki_texts[:20], vocab_size=1000)
    text = "The river flows through the old town."
    encoded = tokenizer(text)["input_ids"]
    assert encoded[0] == tokenizer.cls_token_id and encoded[-1] == tokenizer.sep_token_id
    assert tokenizer.decode(encoded, skip_special_tokens=True) == text.lower()
    assert tokenizer.mask_token == "[MASK]" and tokenizer.convert_tokens_to_ids("[MASK]") != tokenizer.unk_token_id


def test_the_same_texts_train_the_same_vocabulary_and_ids(wiki_texts):
    """tokenizers' own trainer numbers its ## pieces in hash-map order: two trainings in one process differed in 207
    of these 1,000 ids, and in their tokens, before the pieces were named up front."""
    first, second = (train_wordpiece_tokenizer(wiki_texts[:20], vocab_size=1000) for _ in range(2))
    assert first.get_vocab() == second.get_vocab() and len(first.get_vocab()) == 1000
    # The pieces named up front stay ordinary tokens: BERT's five are the only special ones, and text round-trips.
    assert sorted(first.all_special_tokens) == ["[CLS]", "[MASK]", "[PAD]", "[SEP]", "[UNK]"]
    pieces = first.tokenize("unfamiliarly tokenized")
    assert any(piece.startswith("##") for piece in pieces)
    assert first.convert_tokens_to_string(pieces) == "unfamiliarly tokenized"


def test_pretraining_lowers_held_out_mlm_loss(pretrained):
    output_dir, results = pretrained
    assert results["steps_done"] == 40
    # A random model predicts near-uniformly over the vocabulary: loss ~ ln(1000) = 6.9.
    assert results["held_out_loss_before"] == pytest.approx(6.9, abs=0.3)
    assert results["held_out_loss_after"] < results["held_out_loss_before"] - 0.4
    assert results["train_loss_last_logged"] < results["train_loss_first_logged"]
    # Token frequencies alone beat a random model; beating them too takes far more than 40 steps.
    assert results["held_out_mask_token_loss_unigram"] < results["held_out_mask_token_loss_before"] - 0.5
    saved = json.loads((output_dir / "pretraining.json").read_text())
    assert saved["held_out_perplexity_after"] == pytest.approx(results["held_out_perplexity_after"])
    assert saved["settings"]["hidden_size"] == 64 and saved["data"]["documents"] == 50


def test_checkpoint_reloads_as_masked_lm_and_sentence_transformer(pretrained):
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

    output_dir, _ = pretrained
    tokenizer = AutoTokenizer.from_pretrained(output_dir)
    model = AutoModelForMaskedLM.from_pretrained(output_dir).eval()
    assert type(model).__name__ == "BertForMaskedLM"
    assert model.config.hidden_dropout_prob == 0.1  # trained without dropout, saved with BERT's for fine-tuning
    inputs = tokenizer(["the city is the capital of the [MASK] ."], return_tensors="pt")
    with torch.no_grad():
        logits = model(**inputs).logits
    assert logits.shape == (1, inputs["input_ids"].shape[1], len(tokenizer))

    transformer = Transformer(str(output_dir))
    assert transformer.max_seq_length == 64
    pooling = Pooling(transformer.get_embedding_dimension(), pooling_mode="mean")
    encoder = SentenceTransformer(modules=[transformer, pooling], device="cpu")
    embeddings = encoder.encode(["A short sentence.", "Another, different one."], convert_to_tensor=True)
    assert embeddings.shape == (2, 64) and torch.isfinite(embeddings).all()
    assert not torch.allclose(embeddings[0], embeddings[1])


def test_max_minutes_stops_training_early(tmp_path, wiki_texts):
    results = pretrain_masked_lm(wiki_texts[:30], tmp_path, max_steps=10_000, max_minutes=0.02, eval_blocks=16, **TINY)
    assert results["stopped_by_max_minutes"]
    assert 1 <= results["steps_done"] < 10_000
    assert (tmp_path / "model.safetensors").exists()


def test_too_little_text_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="blocks of 64 tokens"):
        pretrain_masked_lm(["just a few words"] * 3, tmp_path, max_steps=1, **{**TINY, "vocab_size": 100})


def test_cli_writes_pretraining_json(tmp_path):
    output_dir = tmp_path / "cli-mlm"
    argv = ["--dataset", "wiki", "--max-rows", "20", "--output", str(output_dir), "--vocab-size", "800",
            "--hidden-size", "32", "--num-layers", "1", "--num-heads", "2", "--max-seq-length", "64",
            "--batch-size", "8", "--max-steps", "5", "--eval-blocks", "16"]  # fmt: skip
    results = pretrain_mlm_main(argv)
    saved = json.loads((output_dir / "pretraining.json").read_text())
    assert saved["steps_done"] == results["steps_done"] == 5
    assert saved["data"]["documents"] == 20 and saved["settings"]["max_steps"] == 5
    assert (output_dir / "tokenizer.json").exists() and (output_dir / "config.json").exists()


def test_interrupted_run_resumes_from_its_last_checkpoint(tmp_path, wiki_texts):
    import shutil

    from safetensors.torch import load_file

    texts, options = wiki_texts[:30], {**TINY, "max_steps": 10, "save_steps": 5, "eval_blocks": 16}
    # One tokenizer for both runs: WordPiece training breaks ties differently from run to run (a resume reloads
    # the tokenizer saved at the start for that reason).
    options["tokenizer"] = train_wordpiece_tokenizer(texts, vocab_size=TINY["vocab_size"], model_max_length=64)
    full = pretrain_masked_lm(texts, tmp_path / "full", **options)
    interrupted = tmp_path / "interrupted"
    pretrain_masked_lm(texts, interrupted, **options)
    shutil.rmtree(interrupted / "checkpoints" / "checkpoint-10")  # as if killed between steps 5 and 10
    resumed = pretrain_masked_lm(texts, interrupted, resume=True, **options)
    assert resumed["resumed"] and resumed["steps_done"] == full["steps_done"] == 10
    assert [entry["step"] for entry in full["held_out_log"]] == [5, 10]
    # The held-out loss measured before the interruption comes back with the checkpoint's trainer state.
    assert [entry["step"] for entry in resumed["held_out_log"]] == [5, 10]
    for entry, reference in zip(resumed["held_out_log"], full["held_out_log"]):
        assert entry["loss"] == pytest.approx(reference["loss"], abs=1e-5)
        assert entry["mask_token_loss"] == pytest.approx(reference["mask_token_loss"], abs=1e-5)
    saved = json.loads((interrupted / "pretraining.json").read_text())
    assert saved["held_out_log"] == resumed["held_out_log"]
    assert [step for step, _ in saved["train_loss_log"]] == [step for step, _ in full["train_loss_log"]]
    weights, reference = (
        load_file(interrupted / "model.safetensors"),
        load_file(tmp_path / "full" / "model.safetensors"),
    )
    assert all(torch.allclose(weights[name], reference[name], atol=1e-6) for name in reference)


def test_resume_with_other_settings_is_refused(tmp_path, wiki_texts):
    options = {**TINY, "max_steps": 4, "save_steps": 2, "eval_blocks": 16}
    pretrain_masked_lm(wiki_texts[:30], tmp_path, **options)
    with pytest.raises(ValueError, match=r"learning_rate: 0.002 -> 0.001.*new output folder"):
        pretrain_masked_lm(wiki_texts[:30], tmp_path, resume=True, **{**options, "learning_rate": 1e-3})
    with pytest.raises(ValueError, match="Nothing to resume"):
        pretrain_masked_lm(wiki_texts[:30], tmp_path / "new", resume=True, **options)
