"""A recipe's results.json records where its trainer checkpoints went (OUTPUT/checkpoints), not the settings'
default (runs/checkpoints): a results file says what happened."""

import json
from pathlib import Path

import pytest

from st_contrastive.data_dir import data_file


def run_declutr(model: str, output: Path) -> None:
    from st_contrastive.commands.declutr import main

    main(
        [
            "--model",
            model,
            "--dataset",
            str(data_file("corpus/docs.jsonl.gz")),
            "--max-rows",
            "4",
            "--max-span-length",
            "32",
            "--min-span-length",
            "8",
            "--batch-size",
            "2",
            "--max-steps",
            "2",
            "--save-steps",
            "2",
            "--eval-tasks",
            "--output",
            str(output),
        ]
    )


def run_supcon(model: str, output: Path) -> None:
    from st_contrastive.commands.supcon import main

    main(
        [
            "--model",
            model,
            "--dataset",
            "snli-dev",
            "--max-rows",
            "48",
            "--batch-size",
            "12",
            "--max-steps",
            "2",
            "--save-steps",
            "2",
            "--eval-tasks",
            "--output",
            str(output),
        ]
    )


def run_simcse(model: str, output: Path) -> None:
    from st_contrastive.commands.simcse import main

    main(
        [
            "--model",
            model,
            "--dataset",
            str(data_file("corpus/docs.jsonl.gz")),
            "--max-rows",
            "2",
            "--batch-size",
            "4",
            "--max-steps",
            "2",
            "--save-steps",
            "2",
            "--eval-tasks",
            "--output",
            str(output),
        ]
    )


@pytest.mark.parametrize("run", [run_declutr, run_supcon, run_simcse], ids=["declutr", "supcon", "simcse"])
def test_results_name_the_checkpoint_folder(tmp_path, tiny_mlm_dir, run):
    output = tmp_path / "run"
    run(tiny_mlm_dir, output)
    recorded = json.loads((output / "results.json").read_text())["config"]["training"]["output_dir"]
    assert recorded == str(output / "checkpoints")
    assert (Path(recorded) / "checkpoint-2" / "trainer_state.json").exists()


def test_multiview_results_name_the_checkpoint_folder(tmp_path, parsed_books):
    from dataclasses import replace

    from st_contrastive.commands.multiview import MultiViewConfig, train_multiview

    config = MultiViewConfig(
        views="dep,seq",
        parsed=parsed_books,
        word_dim=16,
        dim=12,
        eval_tasks=[],
        parse_cache=str(tmp_path / "parsed"),
        output=str(tmp_path / "run"),
    )
    train_multiview(replace(config, training=replace(config.training, batch_size=32, max_steps=2, save_steps=2)))
    recorded = json.loads((tmp_path / "run" / "results.json").read_text())["config"]["training"]["output_dir"]
    assert recorded == str(tmp_path / "run" / "checkpoints")
    assert (Path(recorded) / "checkpoint-2" / "trainer_state.json").exists()


def test_a_run_worse_than_its_base_on_every_task_ends_with_the_verdict(tmp_path, capsys):
    """all-MiniLM-L6-v2 trained on purpose at a learning rate that wrecks it: the run ends with one line that says
    by how much it lost on each task and what to try, and results.json records the same verdict."""
    from st_contrastive.commands.simcse import main
    from st_contrastive.default_model import default_model

    output = tmp_path / "wrecked"
    main(
        [
            *("--model", default_model(), "--dataset", str(data_file("corpus/docs.jsonl.gz")), "--max-rows", "2"),
            *("--batch-size", "4", "--max-steps", "3", "--learning-rate", "0.01", "--warmup-ratio", "0"),
            *("--eval-tasks", "stsb-dev", "sick-dev", "--eval-max-rows", "100", "--output", str(output)),
        ]
    )
    last = capsys.readouterr().out.strip().splitlines()[-1]
    found = json.loads((output / "results.json").read_text())["verdict"]
    assert found["below_base_on_every_task"] and set(found["changes"]) == {"stsb-dev", "sick-dev"}
    assert all(change < -1 for change in found["changes"].values())
    stsb, sick = found["changes"]["stsb-dev"], found["changes"]["sick-dev"]
    assert last == (
        f"Worse than the base on every task scored (stsb-dev {stsb:+.2f}, sick-dev {sick:+.2f}). SimCSE's dropout "
        "views teach an encoder already trained on pairs little and can cost STS: train fewer steps (--max-steps) "
        "at a lower --learning-rate, or start from an MLM-only base."
    )
