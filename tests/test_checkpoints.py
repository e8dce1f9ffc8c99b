"""A checkpoint torn by a kill during its save (a file cut short) is named in one line; resuming from the run
folder skips it and continues from the last complete checkpoint.

Every file a real trainer checkpoint holds (a SupCon + CE run of a tiny model: the SentenceTransformer, the loss's
head, the optimizer, scheduler, RNG and trainer state) is cut short in turn.
"""

from __future__ import annotations

import json
import logging
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from st_contrastive.checkpoints import (
    MANIFEST_NAME,
    CheckpointError,
    latest_complete_checkpoint,
    resolve_resume_point,
    torn_file,
)
from st_contrastive.commands.cli import main as cli_main

CHECKPOINT_FILES = [
    "1_Pooling/config.json",
    "README.md",
    "config.json",
    "config_sentence_transformers.json",
    "loss_state.pt",
    "model.safetensors",
    "modules.json",
    "optimizer.pt",
    "rng_state.pth",
    "scheduler.pt",
    "sentence_bert_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "trainer_state.json",
    "training_args.bin",
    MANIFEST_NAME,
]
# Without a manifest (a checkpoint of an older version, or of pretrain-mlm's plain transformers Trainer) the files'
# own formats tell: torch archives, safetensors and JSON; a cut-short README.md cannot be told.
WITHOUT_MANIFEST = [name for name in CHECKPOINT_FILES if not name.endswith(".md") and name != MANIFEST_NAME]


def supcon_config(model: str, output: Path, **training):
    from st_contrastive.commands.supcon import SupConNLIConfig

    config = SupConNLIConfig(
        model=model, dataset="snli-dev", max_rows=128, eval_tasks=[], no_base_eval=True, output=str(output)
    )
    return replace(
        config, training=replace(config.training, batch_size=16, max_steps=4, save_steps=2, seed=0, **training)
    )


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory, tiny_mlm_dir) -> Path:
    """A SupCon + CE run of 4 steps with checkpoints at steps 2 and 4."""
    from st_contrastive.commands.supcon import train_supcon_nli

    output = tmp_path_factory.mktemp("torn") / "run"
    train_supcon_nli(supcon_config(tiny_mlm_dir, output))
    return output


def cut_short(run: Path, tmp_path: Path, name: str, manifest: bool = True) -> Path:
    """A copy of the run whose checkpoint-4 has ``name`` cut to half its size, as a kill during the save leaves it."""
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    checkpoint = copy / "checkpoints" / "checkpoint-4"
    if not manifest:
        (checkpoint / MANIFEST_NAME).unlink()
    path = checkpoint / name
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    return copy


def test_the_list_is_what_a_real_checkpoint_holds(finished_run):
    for step in (2, 4):
        checkpoint = finished_run / "checkpoints" / f"checkpoint-{step}"
        assert sorted(p.relative_to(checkpoint).as_posix() for p in checkpoint.rglob("*") if p.is_file()) == sorted(
            CHECKPOINT_FILES
        )
        assert torn_file(checkpoint) is None


@pytest.mark.parametrize("name", CHECKPOINT_FILES)
def test_a_torn_checkpoint_is_named_in_one_line(finished_run, tmp_path, tiny_mlm_dir, name, capsys):
    run = cut_short(finished_run, tmp_path, name)
    checkpoint = run / "checkpoints" / "checkpoint-4"
    with pytest.raises(CheckpointError) as error:
        resolve_resume_point(checkpoint)
    assert str(error.value).startswith(f"resume_from_checkpoint='{checkpoint}': torn checkpoint, {name} is ")
    assert str(error.value).endswith(
        f"resume from the run folder {run} to take its last complete checkpoint (checkpoint-2)"
    )
    # The command line names it before anything loads, exit status 2, one line.
    with pytest.raises(SystemExit) as exit_:
        cli_main(
            [
                "supcon",
                "--model",
                tiny_mlm_dir,
                "--dataset",
                "snli-dev",
                "--max-rows",
                "128",
                "--batch-size",
                "16",
                "--max-steps",
                "4",
                "--save-steps",
                "2",
                "--seed",
                "0",
                "--eval-tasks",
                "--no-base-eval",
                "--output",
                str(run),
                "--resume-from-checkpoint",
                str(checkpoint),
            ]
        )
    assert exit_.value.code == 2
    said = str(error.value).replace(f"resume_from_checkpoint='{checkpoint}'", f"--resume-from-checkpoint {checkpoint}")
    assert capsys.readouterr().err == f"st-contrastive supcon: error: {said}\n"
    # From the run folder, the torn checkpoint is passed over for the one before it.
    assert resolve_resume_point(run) == run / "checkpoints" / "checkpoint-2"


@pytest.mark.parametrize("name", WITHOUT_MANIFEST)
def test_without_a_manifest_the_file_formats_tell(finished_run, tmp_path, name):
    run = cut_short(finished_run, tmp_path, name, manifest=False)
    assert torn_file(run / "checkpoints" / "checkpoint-4").startswith(f"{name} is cut short")
    assert latest_complete_checkpoint(run) == run / "checkpoints" / "checkpoint-2"


def test_resuming_from_the_run_folder_skips_the_torn_checkpoint(finished_run, tmp_path, tiny_mlm_dir, caplog):
    """The measured case: optimizer.pt cut short. The run resumes from step 2 and finishes all 4 steps."""
    from st_contrastive.commands.supcon import train_supcon_nli

    run = cut_short(finished_run, tmp_path, "optimizer.pt")
    with caplog.at_level(logging.WARNING):
        results = train_supcon_nli(supcon_config(tiny_mlm_dir, run, resume_from_checkpoint=str(run)))
    assert results["train"]["steps"] == 4
    assert (
        f"Skipping {run / 'checkpoints' / 'checkpoint-4'}, a checkpoint torn while it was saved (optimizer.pt is "
        "cut short" in caplog.text
    )
    state = json.loads((run / "checkpoints" / "checkpoint-4" / "trainer_state.json").read_text())
    assert state["global_step"] == 4 and torn_file(run / "checkpoints" / "checkpoint-4") is None  # saved anew
