"""The DeCLUTR recipe end to end on a tiny model: results JSON, plot, plain checkpoint, MLM export, CLI help."""

import json

import pytest
from sentence_transformers import SentenceTransformer
from transformers import AutoModelForMaskedLM

from st_contrastive.cli import main as cli_main
from st_contrastive.data_dir import data_file
from st_contrastive.recipes.declutr import main


def test_recipe_end_to_end(tmp_path, tiny_mlm_dir):
    output = tmp_path / "declutr-tiny"
    results = main([
        "--model", tiny_mlm_dir, "--documents", str(data_file("corpus/docs.jsonl.gz")), "--max-documents", "12",
        "--max-steps", "3", "--batch-size", "2", "--max-length", "48", "--min-length", "8",
        "--eval-tasks", "stsb-test", "--output", str(output), "--save-masked-lm", "--save-steps", "3",
    ])
    written = json.loads((output / "results.json").read_text())
    assert written["train"]["steps"] == 3
    assert written["config"]["num_anchors"] == 2 and written["config"]["temperature"] == 0.05
    before = written["before"]["stsb-test"]["spearman"]
    after = written["after"]["stsb-test"]["spearman"]
    # Reference for "before": scipy's Spearman of the cosines of the untouched base model, computed here.
    from scipy.stats import spearmanr

    from st_contrastive.evaluation.sts import load_sts

    first, second, gold = load_sts("stsb", "test")
    base = SentenceTransformer(tiny_mlm_dir, device="cpu")
    u, v = base.encode(first, normalize_embeddings=True), base.encode(second, normalize_embeddings=True)
    assert before == pytest.approx(spearmanr((u * v).sum(axis=1), gold).statistic * 100, abs=1e-3)
    assert after != before
    assert results["after"] == written["after"]
    assert (output / "training_curves.png").stat().st_size > 1000
    assert (output / "checkpoints" / "checkpoint-3" / "loss_state.pt").exists()
    reloaded = SentenceTransformer(str(output), device="cpu")
    assert reloaded.encode(["one sentence"]).shape == (1, 32)
    assert AutoModelForMaskedLM.from_pretrained(str(output / "masked-lm")).config.vocab_size == 2000


def test_model_name_follows_the_paper(tiny_model):
    from st_contrastive.recipes.declutr import model_name

    assert model_name(tiny_model) == "declutr-2layer"
    tiny_model[0].auto_model.config.num_hidden_layers = 6
    assert model_name(tiny_model) == "declutr-small"
    tiny_model[0].auto_model.config.num_hidden_layers = 12
    assert model_name(tiny_model) == "declutr-base"


def test_cli_help_lists_commands_and_paper_defaults(capsys):
    cli_main(["--help"])
    out = capsys.readouterr().out
    assert all(name in out for name in ("declutr", "supcon", "pretrain-mlm", "evaluate")), out
    with pytest.raises(SystemExit):
        cli_main(["declutr", "--help"])
    text = capsys.readouterr().out
    for expected in ("--temperature", "0.05", "--num-anchors", "--learning-rate", "5e-05", "--weight-decay", "0.1"):
        assert expected in text
    with pytest.raises(SystemExit, match="unknown command 'declutter'"):
        cli_main(["declutter"])


def test_ablation_runs_every_variant_at_equal_steps(tmp_path, tiny_mlm_dir):
    from st_contrastive.recipes.declutr_ablation import main as ablation

    table = ablation([
        "--model", tiny_mlm_dir, "--output", str(tmp_path / "ablation"), "--eval-tasks", "stsb-test",
        "--documents", str(data_file("corpus/docs.jsonl.gz")), "--max-documents", "8", "--max-steps", "2",
        "--batch-size", "2", "--max-length", "32", "--min-length", "8",
    ])
    assert list(table) == ["base (mean pooling)", "mlm-only", "contrastive-only", "declutr"]
    for name in ("mlm-only", "contrastive-only", "declutr"):
        run = json.loads((tmp_path / "ablation" / name / "results.json").read_text())
        assert run["train"]["steps"] == 2
    assert json.loads((tmp_path / "ablation" / "mlm-only" / "results.json").read_text())["config"]["contrastive_weight"] == 0
    assert (tmp_path / "ablation" / "ablation.png").exists()
