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
