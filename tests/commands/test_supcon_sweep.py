"""The SupCon sweep on a tiny model: one CE-only baseline, one run per λ x candidates, reuse and added tasks."""

import argparse
import json

import pytest

from st_contrastive.commands.supcon_sweep import candidates, main, variants


def test_variants_name_the_paper_settings():
    runs = variants([0, 0.3, 1.0], [(3, 3), ("all", "all")])
    assert list(runs) == ["ce-only", "3p3n-lambda0.3", "allpalln-lambda0.3", "3p3n-lambda1", "allpalln-lambda1"]
    assert runs["3p3n-lambda0.3"] == {"supcon_weight": 0.3, "positives": 3, "negatives": 3}
    assert runs["ce-only"] == {"supcon_weight": 0.0}
    assert candidates("3palln") == (3, "all")
    with pytest.raises(argparse.ArgumentTypeError, match="3n3p"):
        candidates("3n3p")


def test_swept_options_are_refused(capsys):
    with pytest.raises(SystemExit):
        main(["--supcon-weight", "0.3", "--positives", "3", "--negatives", "2"])
    assert "--negatives, --positives are swept: use --candidates" in capsys.readouterr().err


def test_sweep_trains_each_variant_once_and_adds_missing_tasks(tmp_path, tiny_mlm_dir):
    output = tmp_path / "sweep"
    common = [
        "--model",
        tiny_mlm_dir,
        "--output",
        str(output),
        "--supcon-weight",
        "0",
        "0.5",
        "--candidates",
        "1p2n",
        "allpalln",
        "--dataset",
        "snli-dev",
        "--max-rows",
        "96",
        "--batch-size",
        "16",
        "--max-steps",
        "2",
        "--eval-max-rows",
        "100",
    ]
    table = main([*common, "--eval-tasks", "stsb-test"])
    assert list(table) == ["base", "ce-only", "1p2n-lambda0.5", "allpalln-lambda0.5"]
    assert table["ce-only"]["sts avg vs CE"] == 0
    assert table["allpalln-lambda0.5"]["sts avg vs CE"] == pytest.approx(
        table["allpalln-lambda0.5"]["stsb-test"] - table["ce-only"]["stsb-test"]
    )
    config = json.loads((output / "1p2n-lambda0.5" / "results.json").read_text())["config"]
    assert (config["supcon_weight"], config["positives"], config["negatives"]) == (0.5, 1, 2)
    weights = (output / "ce-only" / "model.safetensors").stat().st_mtime_ns

    # A second call reuses the trained variants and only evaluates the task they lack.
    table = main([*common, "--eval-tasks", "stsb-test", "sick-test"])
    assert (output / "ce-only" / "model.safetensors").stat().st_mtime_ns == weights
    assert all({"stsb-test", "sick-test"} <= set(row) for row in table.values())
    assert set(json.loads((output / "ce-only" / "results.json").read_text())["after"]) == {"stsb-test", "sick-test"}
    assert (output / "sweep.png").stat().st_size > 0 and "| ce-only |" in (output / "sweep.md").read_text()
