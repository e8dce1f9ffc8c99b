"""The recipes run unchanged under `torchrun` and `accelerate launch` (2 CPU processes, gloo): the job trains with
DDP, and rank 0 alone saves a checkpoint that reloads and writes one results.json."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sentence_transformers import SentenceTransformer

from st_contrastive.commands.cli import main as cli_main
from st_contrastive.data_dir import data_file

# Real process groups and launchers: in `make test`, left out of `make test-fast`.
pytestmark = pytest.mark.distributed

BIN = Path(sys.executable).parent


def _launch(launcher: list[str], recipe: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    """The ``st-contrastive`` entry point under ``launcher``, as docs/multi-gpu.md launches it (``--no_python``: the
    launcher runs the installed script itself)."""
    env = os.environ | {"HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    return subprocess.run(
        [*launcher, "--no_python", str(BIN / "st-contrastive"), *recipe],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _check(done: subprocess.CompletedProcess, output: Path, world_size: int, runs: int = 1) -> dict:
    """The run in ``output``, one of the ``runs`` that the launched job trained, as rank 0 alone wrote it."""
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((output / "results.json").read_text())
    # The trainer saw both processes, and only rank 0 wrote the runs (the other returned after training).
    assert results["train"]["world_size"] == world_size
    assert done.stdout.count("Saved ") == runs
    assert SentenceTransformer(str(output), device="cpu").encode(["a sentence"]).shape[0] == 1
    return results


@pytest.mark.skipif(shutil.which("torchrun", path=str(BIN)) is None, reason="torchrun is not installed")
def test_multiview_recipe_under_torchrun_parses_once(tmp_path):
    pytest.importorskip("spacy")
    output, cache = tmp_path / "multiview", tmp_path / "parsed"
    done = _launch(
        [str(BIN / "torchrun"), "--standalone", "--nproc_per_node", "2"],
        [
            "multiview",
            "--dataset",
            "books",
            "--max-rows",
            "1",
            "--parse-cache",
            str(cache),
            "--views",
            "dep,seq",
            "--word-dim",
            "16",
            "--dim",
            "12",
            "--max-steps",
            "2",
            "--batch-size",
            "16",
            "--eval-tasks",
            "--output",
            str(output),
        ],
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((output / "results.json").read_text())
    assert results["train"]["world_size"] == 2
    assert results["train"]["loss"]["gather_across_devices"] is True
    # Rank 0 parsed the document into the cache while rank 1 waited, then rank 1 read it: parsed once, not twice
    # (two ranks writing at once appended every sentence twice).
    [parsed] = cache.glob("books-1docs-*.jsonl.gz")
    with gzip.open(parsed, "rt", encoding="utf-8") as f:
        ids = [json.loads(line)["id"] for line in f]
    assert len(ids) == len(set(ids)) == results["config"]["sentences"] > 20
    model = SentenceTransformer(str(output), device="cpu", trust_remote_code=True)
    assert model.encode(["A new sentence to parse."]).shape == (1, 24)


@pytest.mark.skipif(shutil.which("torchrun", path=str(BIN)) is None, reason="torchrun is not installed")
def test_pretrain_mlm_under_torchrun_shares_one_tokenizer_and_one_stop(tmp_path):
    output = tmp_path / "mlm"
    # --max-minutes ends the run after its first step; rank 0's clock decides for both ranks, else one would wait
    # forever for the other's gradients (the launcher's timeout would end the test).
    done = _launch(
        [str(BIN / "torchrun"), "--standalone", "--nproc_per_node", "2"],
        [
            "pretrain-mlm",
            "--dataset",
            "wiki",
            "--max-rows",
            "20",
            "--output",
            str(output),
            "--vocab-size",
            "800",
            "--hidden-size",
            "32",
            "--num-layers",
            "1",
            "--num-heads",
            "2",
            "--max-seq-length",
            "64",
            "--batch-size",
            "4",
            "--max-steps",
            "1000",
            "--max-minutes",
            "0.0001",
            "--eval-blocks",
            "16",
            "--save-steps",
            "500",
        ],
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((output / "pretraining.json").read_text())
    assert results["world_size"] == 2 and results["stopped_by_max_minutes"] and results["steps_done"] == 1
    assert done.stdout.count("saved to") == 1  # rank 0 alone printed the table
    # One tokenizer, trained by rank 0: the WordPiece training log appears once.
    assert (output / "tokenizer.json").exists() and done.stderr.count("Training a WordPiece tokenizer") == 1


@pytest.mark.skipif(shutil.which("torchrun", path=str(BIN)) is None, reason="torchrun is not installed")
def test_chain_under_torchrun_trains_every_stage_on_both_ranks(tmp_path, tiny_mlm_dir):
    """A comparison: every stage trains with DDP, rank 0 evaluates in between, and the second SupCon stage starts
    from the DeCLUTR checkpoint that rank 0 saved (the other rank waits for it). Its stages are the declutr and
    supcon commands, so this is also the declutr command under torchrun (one launch: starting ranks costs more than
    their few steps)."""
    output = tmp_path / "chain"
    done = _launch(
        [str(BIN / "torchrun"), "--standalone", "--nproc_per_node", "2"],
        [
            "chain",
            "--model",
            tiny_mlm_dir,
            "--declutr-steps",
            "2",
            "--supcon-steps",
            "2",
            "--eval-tasks",
            "stsb-test",
            "--eval-max-rows",
            "100",
            "--output",
            str(output),
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
            "--save-steps",
            "2",
        ],
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    chain = json.loads((output / "chain.json").read_text())
    assert list(chain["scores"]) == ["base", "declutr", "supcon", "declutr+supcon"]
    for arm in ("declutr", "supcon", "declutr+supcon"):
        results = json.loads((output / arm / "results.json").read_text())
        assert results["train"]["world_size"] == 2 and results["train"]["steps"] == 2, arm
    assert json.loads((output / "declutr+supcon" / "results.json").read_text())["model"] == str(output / "declutr")
    assert done.stdout.count("| arm |") == 1  # rank 0 alone printed the table
    declutr = _check(done, output / "declutr", world_size=2, runs=3)
    assert declutr["train"]["loss"]["gather_across_devices"] is True
    # One rank wrote the DeCLUTR stage's trainer checkpoint (--save-steps goes to that stage; transformers 5 calls
    # _save on every rank, and both once wrote the files).
    assert done.stderr.count("Saving model checkpoint to") == 1


@pytest.mark.skipif(shutil.which("accelerate", path=str(BIN)) is None, reason="accelerate's launcher is not installed")
def test_supcon_sweep_under_accelerate_launch_then_resumed_in_one_process(tmp_path, tiny_mlm_dir, monkeypatch, capsys):
    """A sweep's variants train on both ranks; run again without a launcher (here, in this process), it reuses them
    (rank 0 wrote them). The variants are supcon command runs, so this is also the supcon command under accelerate
    launch."""
    output = tmp_path / "sweep"
    sweep = [
        "supcon-sweep",
        "--model",
        tiny_mlm_dir,
        "--output",
        str(output),
        "--supcon-weight",
        "0",
        "0.5",
        "--candidates",
        "allpalln",
        "--dataset",
        "snli-dev",
        "--max-rows",
        "48",
        "--batch-size",
        "12",
        "--max-steps",
        "2",
        "--eval-tasks",
        "stsb-test",
        "--eval-max-rows",
        "100",
    ]
    done = _launch(
        [
            str(BIN / "accelerate"),
            "launch",
            "--multi_gpu",
            "--num_processes",
            "2",
            "--num_machines",
            "1",
            "--mixed_precision",
            "no",
            "--dynamo_backend",
            "no",
        ],
        sweep,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    for variant in ("ce-only", "allpalln-lambda0.5"):
        results = _check(done, output / variant, world_size=2, runs=2)
        assert results["train"]["loss"]["gather_across_devices"] is True
    assert done.stdout.count("| variant |") == 1  # rank 0 alone wrote and printed the table
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    cli_main(sweep)
    assert capsys.readouterr().out.count("reusing") == 2
