"""A finished run in --output is never replaced silently: refused in one line before anything loads, replaced with
--overwrite (its side folders too), continued with --resume-from-checkpoint."""

from __future__ import annotations

import json
import logging

import pytest

from st_contrastive.commands.cli import main as cli_main


def supcon(model: str, output, *extra: str) -> list[str]:
    return [
        "supcon",
        "--model",
        model,
        "--dataset",
        "snli-dev",
        "--max-rows",
        "64",
        "--batch-size",
        "16",
        "--max-steps",
        "2",
        "--save-steps",
        "2",
        "--eval-tasks",
        "--output",
        str(output),
        "--seed",
        "0",
        *extra,
    ]


def test_a_finished_run_is_refused_then_replaced_with_overwrite(tmp_path, tiny_mlm_dir, capsys, caplog):
    output = tmp_path / "run"
    cli_main(supcon(tiny_mlm_dir, output))
    cli_main(["push", str(output), "--repo-id", "me/model", "--dry-run"])  # a side folder: hub-upload/
    assert (output / "hub-upload" / "README.md").exists()
    finished = (output / "results.json").read_bytes()
    capsys.readouterr()

    with pytest.raises(SystemExit) as exit_:
        cli_main(supcon(tiny_mlm_dir, output))
    assert exit_.value.code == 2
    assert capsys.readouterr().err == (
        f"st-contrastive supcon: error: --output {output}: holds a finished run "
        "(results.json): add --overwrite to replace it, or choose another --output\n"
    )
    assert (output / "results.json").read_bytes() == finished and (output / "hub-upload").exists()

    cli_main(supcon(tiny_mlm_dir, output, "--overwrite"))
    assert not (output / "hub-upload").exists()  # the old run's side folders went with it
    assert (output / "results.json").read_bytes() != finished
    assert json.loads((output / "results.json").read_text())["train"]["steps"] == 2

    # Resuming into it is allowed: more steps continue from its checkpoint (a warned change of settings).
    with caplog.at_level(logging.WARNING):
        cli_main(supcon(tiny_mlm_dir, output, "--max-steps", "3", "--resume-from-checkpoint", str(output)))
    assert json.loads((output / "results.json").read_text())["train"]["steps"] == 3
    assert f"Resuming {output} with --max-steps 2 -> 3" in caplog.text
