"""`st-contrastive convert`: a *ForMaskedLM checkpoint (BERT, or RoBERTa like the original DeCLUTR releases) becomes
a vanilla sentence-transformers model whose embeddings are the mean-pooled last layer."""

from __future__ import annotations

import json

import pytest
import torch
from sentence_transformers import SentenceTransformer
from transformers import AutoModel, AutoTokenizer, RobertaConfig, RobertaForMaskedLM

from st_contrastive.commands.convert import convert, main
from st_contrastive.commands.input_checks import SettingError

TEXTS = ["A man is playing a guitar.", "The history of the region is long and complicated, and well documented."]


def _mean_pooled(model_dir: str) -> torch.Tensor:
    """The reference: transformers' encoder, last layer averaged over the real tokens."""
    tokenizer, encoder = AutoTokenizer.from_pretrained(model_dir), AutoModel.from_pretrained(model_dir).eval()
    batch = tokenizer(TEXTS, padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = encoder(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).float()
    return (hidden * mask).sum(1) / mask.sum(1)


@pytest.fixture(scope="module")
def tiny_roberta_dir(tmp_path_factory, tiny_mlm_dir):
    """A RoBERTa *ForMaskedLM folder, the architecture of johngiorgi/declutr-small (positions offset by padding)."""
    path = tmp_path_factory.mktemp("tiny-roberta")
    tokenizer = AutoTokenizer.from_pretrained(tiny_mlm_dir)
    torch.manual_seed(0)
    config = RobertaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=130,
        pad_token_id=tokenizer.pad_token_id,
    )
    RobertaForMaskedLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


@pytest.mark.parametrize("source", ["bert", "roberta"])
def test_converted_model_is_the_mean_pooled_encoder(tmp_path, tiny_mlm_dir, tiny_roberta_dir, source):
    model_dir = {"bert": tiny_mlm_dir, "roberta": tiny_roberta_dir}[source]
    output = main([model_dir, "--output", str(tmp_path / "st")])
    modules = json.loads((output / "modules.json").read_text())
    assert [m["type"].rsplit(".", 1)[-1] for m in modules] == ["Transformer", "Pooling"]
    embeddings = SentenceTransformer(str(output), device="cpu").encode(TEXTS, convert_to_tensor=True)
    torch.testing.assert_close(embeddings, _mean_pooled(model_dir), atol=1e-5, rtol=1e-4)


def test_convert_refuses_a_non_empty_output_and_a_folder_without_a_model(tmp_path, tiny_mlm_dir):
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "keep.txt").write_text("mine")
    with pytest.raises(SettingError, match="--output .* is not empty"):
        convert(tiny_mlm_dir, str(taken))
    assert (taken / "keep.txt").read_text() == "mine"
    with pytest.raises(SettingError, match="has no config.json"):
        convert(str(taken), str(tmp_path / "new"))


def test_a_sentence_transformers_folder_is_refused_not_stripped_of_its_modules(tmp_path, tiny_mlm_dir, capsys):
    """Converting would keep the transformer and drop Pooling and Normalize: the folder is refused in one line."""
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer

    from st_contrastive.commands.cli import main as cli

    transformer = Transformer(tiny_mlm_dir)
    pooling = Pooling(transformer.get_embedding_dimension(), pooling_mode="cls")
    source = tmp_path / "normalized"
    SentenceTransformer(modules=[transformer, pooling, Normalize()], device="cpu").save(str(source))
    with pytest.raises(
        ValueError,
        match=rf"SOURCE {source}: is already a sentence-transformers model .*"
        rf"SentenceTransformer\('{source}'\)",
    ):
        convert(str(source), str(tmp_path / "out"))
    with pytest.raises(SystemExit) as exit_info:
        cli(["convert", str(source), "--output", str(tmp_path / "out")])
    assert "Normalize" in str(exit_info.value) and "\n" not in str(exit_info.value)
    assert "Traceback" not in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
