"""The DeCLUTR recipe end to end on a tiny model: results JSON, plot, plain checkpoint, MLM export, CLI help, and
documents too short for the spans (skipped and counted by default, or an error naming the option)."""

import json
import re

import pytest
import torch
from sentence_transformers import SentenceTransformer
from transformers import AutoModelForMaskedLM

from st_contrastive.commands.cli import main as cli_main
from st_contrastive.commands.declutr import main
from st_contrastive.commands.input_checks import SettingError
from st_contrastive.data_dir import data_file


def test_recipe_end_to_end(tmp_path, tiny_mlm_dir):
    output = tmp_path / "declutr-tiny"
    results = main(
        [
            "--model",
            tiny_mlm_dir,
            "--dataset",
            str(data_file("corpus/docs.jsonl.gz")),
            "--max-rows",
            "12",
            "--max-steps",
            "3",
            "--batch-size",
            "2",
            "--max-span-length",
            "48",
            "--min-span-length",
            "8",
            "--eval-tasks",
            "stsb-test",
            "--output",
            str(output),
            "--save-masked-lm",
            "--save-steps",
            "3",
        ]
    )
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
    from st_contrastive.commands.declutr import model_name

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
    from st_contrastive.commands.declutr_ablation import main as ablation

    argv = [
        "--model",
        tiny_mlm_dir,
        "--output",
        str(tmp_path / "ablation"),
        "--eval-tasks",
        "stsb-test",
        "--eval-max-rows",
        "200",
        "--dataset",
        str(data_file("corpus/docs.jsonl.gz")),
        "--max-rows",
        "8",
        "--max-steps",
        "2",
        "--batch-size",
        "2",
        "--max-span-length",
        "32",
        "--min-span-length",
        "8",
    ]
    table = ablation(argv)
    assert list(table) == ["base (mean pooling)", "mlm-only", "contrastive-only", "declutr"]
    for name in ("mlm-only", "contrastive-only", "declutr"):
        run = json.loads((tmp_path / "ablation" / name / "results.json").read_text())
        assert run["train"]["steps"] == 2
    assert (
        json.loads((tmp_path / "ablation" / "mlm-only" / "results.json").read_text())["config"]["contrastive_weight"]
        == 0
    )
    assert (tmp_path / "ablation" / "ablation.png").exists()

    # A rerun reuses the variants trained with the same settings; other settings are refused before any work.
    trained = {
        name: (tmp_path / "ablation" / name / "model.safetensors").stat().st_mtime_ns
        for name in table
        if name != "base (mean pooling)"
    }
    assert ablation(argv) == table
    assert {
        name: (tmp_path / "ablation" / name / "model.safetensors").stat().st_mtime_ns for name in trained
    } == trained
    with pytest.raises(SettingError) as error:
        ablation([*argv, "--temperature", "0.1"])
    assert error.value.problems[0] == (
        f"--output {tmp_path / 'ablation'}: its variant mlm-only finished with other "
        "settings (--temperature 0.05 -> 0.1): add --overwrite to retrain the variants, "
        "or choose another --output"
    )


def test_ablation_without_tasks_trains_the_variants_and_prints_them(tmp_path, tiny_mlm_dir, capsys):
    """`--eval-tasks` with no task only trains (as for declutr): the table lists the variants without scores. It once
    stopped with a TypeError on the empty average, after all the training."""
    from st_contrastive.commands.declutr_ablation import main as ablation

    table = ablation(
        [
            "--model",
            tiny_mlm_dir,
            "--output",
            str(tmp_path / "ablation"),
            "--eval-tasks",
            "--variants",
            "contrastive-only",
            "--dataset",
            str(data_file("corpus/docs.jsonl.gz")),
            "--max-rows",
            "4",
            "--max-steps",
            "1",
            "--batch-size",
            "2",
            "--max-span-length",
            "32",
            "--min-span-length",
            "8",
        ]
    )
    assert table == {"base (mean pooling)": {"avg": None}, "contrastive-only": {"avg": None}}
    assert json.loads((tmp_path / "ablation" / "contrastive-only" / "results.json").read_text())["train"]["steps"] == 1
    assert capsys.readouterr().out.splitlines()[-1].split() == ["contrastive-only", "-"]


def test_simcse_control_runs_at_the_declutr_budget_with_curves(tmp_path, tiny_mlm_dir):
    from st_contrastive.commands.declutr_ablation import main as ablation

    table = ablation(
        [
            "--model",
            tiny_mlm_dir,
            "--output",
            str(tmp_path / "controls"),
            "--eval-tasks",
            "stsb-dev",
            "--eval-max-rows",
            "200",
            "--variants",
            "contrastive-only",
            "simcse",
            "--dataset",
            str(data_file("corpus/docs.jsonl.gz")),
            "--max-rows",
            "8",
            "--max-steps",
            "4",
            "--batch-size",
            "2",
            "--max-span-length",
            "32",
            "--min-span-length",
            "8",
            "--temperature",
            "0.1",
            "--eval-steps",
            "2",
        ]
    )
    assert list(table) == ["base (mean pooling)", "contrastive-only", "simcse"]
    simcse = json.loads((tmp_path / "controls" / "simcse" / "results.json").read_text())
    # 2 documents x 2 anchors = 4 sentences a step; the same τ and steps as the DeCLUTR variant.
    assert simcse["train"]["steps"] == 4 and simcse["config"]["training"]["batch_size"] == 4
    assert simcse["config"]["temperature"] == 0.1 and simcse["config"]["sentences"] == 16
    assert table["simcse"]["stsb-dev"] != table["base (mean pooling)"]["stsb-dev"]
    # The saved checkpoint keeps the model's own length limit, not SimCSE's 32 training tokens.
    assert SentenceTransformer(str(tmp_path / "controls" / "simcse"), device="cpu").max_seq_length == 256
    summary = json.loads((tmp_path / "controls" / "ablation.json").read_text())
    # The curves read the same 200 dev rows as the table (--eval-max-rows caps both): they start at the base's score.
    for name in ("contrastive-only", "simcse"):
        steps = [step for step, _ in summary["eval_curves"][name]["sts-b-dev"]]
        assert steps == [0, 2, 4], steps
        assert summary["eval_curves"][name]["sts-b-dev"][0][1] == pytest.approx(
            table["base (mean pooling)"]["stsb-dev"]
        )
    # DeCLUTR's last point is the final model (SimCSE's is scored at its 32 training tokens, the final at the model's).
    assert summary["eval_curves"]["contrastive-only"]["sts-b-dev"][-1][1] == pytest.approx(
        table["contrastive-only"]["stsb-dev"], abs=0.01
    )  # batches padded differently: float noise
    assert (tmp_path / "controls" / "curves.png").stat().st_size > 1000


def test_new_mlm_head_warms_up_alone_before_joint_training(tmp_path, tiny_model, tiny_mlm_dir):
    from st_contrastive.commands.declutr import DeCLUTRConfig, warm_up_mlm_head
    from st_contrastive.data import DeCLUTRDataCollator, SpanSampler, load_documents, prepare_declutr_dataset
    from st_contrastive.losses import DeCLUTRLoss

    headless = tmp_path / "headless"
    tiny_model.save(str(headless))  # Transformer + Pooling: a BertModel, no MLM head (as all-MiniLM-L6-v2)
    model = SentenceTransformer(str(headless), device="cpu")
    loss = DeCLUTRLoss(model)
    assert not loss.mlm_head.pretrained
    sampler = SpanSampler(num_anchors=2, num_positives=2, min_length=8, max_length=32)
    dataset = prepare_declutr_dataset(
        load_documents(data_file("corpus/docs.jsonl.gz"), limit=12), model.tokenizer, sampler
    )
    encoder = {name: p.detach().clone() for name, p in model.named_parameters()}
    head = {name: p.detach().clone() for name, p in loss.mlm_head.named_parameters() if name not in encoder}
    config = DeCLUTRConfig(mlm_head_warmup_steps=3)
    config.training.batch_size = 2
    run = warm_up_mlm_head(model, loss, dataset, DeCLUTRDataCollator(model.tokenizer, sampler), config, tmp_path)
    logged = run.summary()["last_log"]
    assert run.steps == 3 and "mlm" in logged and logged.get("contrastive", 0) == 0  # MLM alone
    assert all(torch.equal(p, encoder[name]) for name, p in model.named_parameters())  # encoder untouched
    changed = [name for name, p in loss.mlm_head.named_parameters() if name in head and not torch.equal(p, head[name])]
    assert changed, "the head did not learn"
    assert all(p.requires_grad for p in model.parameters()) and (loss.contrastive_weight, loss.mlm_weight) == (1, 1)

    options = [
        "--dataset",
        str(data_file("corpus/docs.jsonl.gz")),
        "--max-rows",
        "12",
        "--batch-size",
        "2",
        "--max-span-length",
        "48",
        "--min-span-length",
        "8",
        "--max-steps",
        "2",
        "--mlm-head-warmup-steps",
        "3",
        "--eval-tasks",
    ]
    joint = main(["--model", str(headless), "--output", str(tmp_path / "joint"), *options])
    assert joint["mlm_head_warmup"]["steps"] == 3 and joint["train"]["steps"] == 2
    assert joint["base_is_sentence_encoder"]  # a saved SentenceTransformer: the table is read as continued training
    # A base that ships its MLM head needs no warm-up: the option does nothing.
    shipped = main(["--model", tiny_mlm_dir, "--output", str(tmp_path / "shipped"), *options])
    assert shipped["mlm_head_warmup"] is None and shipped["train"]["steps"] == 2
    assert not shipped["base_is_sentence_encoder"]  # a masked LM read by mean pooling


def test_chain_trains_three_arms_and_resumes(tmp_path, tiny_mlm_dir):
    from st_contrastive.commands.chain import main as chain

    argv = [
        "--model",
        tiny_mlm_dir,
        "--output",
        str(tmp_path / "chain"),
        "--eval-tasks",
        "stsb-test",
        "--eval-max-rows",
        "200",
        "--declutr-steps",
        "2",
        "--supcon-steps",
        "2",
        "--dataset",
        str(data_file("corpus/docs.jsonl.gz")),
        "--max-rows",
        "8",
        "--batch-size",
        "2",
        "--max-span-length",
        "32",
        "--min-span-length",
        "8",
    ]
    table = chain(argv)
    assert list(table) == ["base", "declutr", "supcon", "declutr+supcon"]
    chained = json.loads((tmp_path / "chain" / "declutr+supcon" / "results.json").read_text())
    assert chained["model"] == str(tmp_path / "chain" / "declutr") and chained["train"]["steps"] == 2
    assert json.loads((tmp_path / "chain" / "declutr" / "results.json").read_text())["train"]["steps"] == 2
    assert len({row["stsb-test"] for row in table.values()}) == 4  # four different models
    # A rerun reads every finished arm and its scores back.
    stamp = (tmp_path / "chain" / "supcon" / "model.safetensors").stat().st_mtime_ns
    assert chain(argv) == table
    assert (tmp_path / "chain" / "supcon" / "model.safetensors").stat().st_mtime_ns == stamp
    assert "| declutr+supcon |" in (tmp_path / "chain" / "chain.md").read_text()


# Documents too short for the spans, on real Wikipedia documents. 3 anchors of up to 254 tokens (the tiny model's 256
# positions less [CLS] and [SEP]) need 1,524 tokens, which some of the first 12 shared articles lack (with the tiny
# tokenizer, the fourth has 1,200): they are skipped, and the kept rows are a selection with a gap, as with the
# paper's settings on the shared corpus (2,109 of 4,518 articles skipped for all-MiniLM-L6-v2).


def test_the_command_skips_short_documents_and_trains(tmp_path, tiny_mlm_dir, caplog):
    output = tmp_path / "declutr"
    with caplog.at_level("WARNING"):  # the README's command, on 12 articles, 3 anchors, 2 steps, no evaluation
        cli_main(
            [
                "declutr",
                "--model",
                tiny_mlm_dir,
                "--dataset",
                "wiki",
                "--max-rows",
                "12",
                "--num-anchors",
                "3",
                "--batch-size",
                "2",
                "--max-steps",
                "2",
                "--eval-tasks",
                "--output",
                str(output),
            ]
        )
    results = json.loads((output / "results.json").read_text())
    config = results["config"]
    assert results["train"]["steps"] == 2 and config["short_documents"] == "skip" and config["max_span_length"] == 254
    assert config["documents_skipped"] >= 1 and config["documents_used"] >= 2
    assert config["documents_used"] + config["documents_skipped"] == 12
    assert f"Skipped {config['documents_skipped']} of 12 documents shorter than 1524 tokens" in caplog.text
    assert "--short-documents shrink keeps them" in caplog.text and "SpanSampler(" not in caplog.text
    assert SentenceTransformer(str(output), device="cpu").encode(["one sentence"]).shape == (1, 32)


def test_the_command_names_its_option_when_short_documents_stop_it(tmp_path, tiny_mlm_dir):
    with pytest.raises(SystemExit) as stopped:
        cli_main(
            [
                "declutr",
                "--model",
                tiny_mlm_dir,
                "--dataset",
                "wiki",
                "--max-rows",
                "12",
                "--num-anchors",
                "3",
                "--short-documents",
                "error",
                "--eval-tasks",
                "--output",
                str(tmp_path / "o"),
            ]
        )
    message = str(stopped.value)
    assert re.search(r"documents are too short for span sampling; the first is row \d+ with \d+ tokens", message)
    assert "Lower --max-span-length 254, or pass --short-documents skip to drop them" in message
    assert "SpanSampler(" not in message and "short_documents=" not in message


def test_sentence_transformers_methods_train_for_the_same_seconds_at_their_own_settings(tmp_path, tiny_mlm_dir):
    """At equal wall time SimCSE, TSDAE and CT run sentence-transformers' own losses at their published settings,
    each for --max-seconds (--max-steps caps them); the table says each one's steps, seconds and rows seen."""
    from st_contrastive.commands.declutr_ablation import main as ablation

    ablation(
        [
            *("--model", tiny_mlm_dir, "--output", str(tmp_path / "timed")),
            *("--eval-tasks", "stsb-dev", "--eval-max-rows", "100"),
            *("--variants", "contrastive-only", "simcse", "tsdae", "ct"),
            *("--dataset", str(data_file("corpus/docs.jsonl.gz")), "--max-rows", "30"),
            # No warm-up: the first step has the full learning rate, so even one step moves the weights (below).
            *("--max-seconds", "3", "--max-steps", "100000", "--batch-size", "2", "--warmup-ratio", "0"),
            *("--max-span-length", "32", "--min-span-length", "8"),
        ]
    )
    summary = json.loads((tmp_path / "timed" / "ablation.json").read_text())
    for name, published in (("simcse", (64, 3e-5)), ("tsdae", (8, 3e-5)), ("ct", (128, 5e-5))):
        config = json.loads((tmp_path / "timed" / name / "results.json").read_text())["config"]
        assert (config["training"]["batch_size"], config["training"]["learning_rate"]) == published
        assert config["training"]["max_seconds"] == 3 and config["training"]["seed"] == 42
    for name, trained in summary["trained"].items():
        # Time stopped each (not the step cap), after the step that crossed 3 s.
        assert trained["seconds"] >= 3 and 0 < trained["steps"] < 100000, (name, trained)
        assert trained["rows"] == trained["steps"] * trained["batch_size"]
    # Each trained its encoder: the saved weights moved from the base's. (Not the scores: a loaded machine fits few
    # steps in 3 s, and a few small steps of a tiny model can leave 100 pairs' Spearman ranks as they were.)
    base = SentenceTransformer(tiny_mlm_dir).state_dict()
    for name in ("simcse", "tsdae", "ct"):
        trained = SentenceTransformer(str(tmp_path / "timed" / name)).state_dict()
        assert any(not torch.equal(trained[key], base[key]) for key in base if key in trained), name
