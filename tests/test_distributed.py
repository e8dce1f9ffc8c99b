"""The helpers a recipe uses under torchrun / accelerate, on two real gloo processes: rank 0's decision reaches
every rank, rank 0 runs a block before the others (which then read what it wrote), and each rank destroys its
process group when it exits (its gloo threads aborted an exiting rank in CI otherwise)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

# Real process groups and launchers: in `make test`, left out of `make test-fast`.
pytestmark = pytest.mark.distributed


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _rank(rank: int, folder: str) -> dict:
    import time
    from pathlib import Path

    from st_contrastive.distributed import agree_with_rank_zero, is_main_process, main_process_first

    shared = Path(folder) / "written-by-rank-0.txt"
    with main_process_first():
        if is_main_process():
            time.sleep(1.0)  # a slow writer: rank 1 must still find the file complete
            shared.write_text("tokenizer")
        seen = shared.read_text() if shared.exists() else None
    return {
        "seen": seen,
        # Each rank's own clock says something else; rank 0's verdict is the one every rank acts on.
        "stop_if_rank_0_says": agree_with_rank_zero(rank == 0, "cpu"),
        "stop_if_rank_1_says": agree_with_rank_zero(rank == 1, "cpu"),
    }


def test_rank_zero_writes_first_and_decides_for_every_rank(tmp_path, two_ranks):
    for result in two_ranks.run(_rank, str(tmp_path)):
        assert result == {"seen": "tokenizer", "stop_if_rank_0_says": True, "stop_if_rank_1_says": False}


def test_one_process_runs_the_block_and_keeps_its_own_decision(tmp_path, monkeypatch):
    from st_contrastive.distributed import agree_with_rank_zero, main_process_first

    monkeypatch.delenv("WORLD_SIZE", raising=False)
    with main_process_first():
        (tmp_path / "done").write_text("yes")
    assert (tmp_path / "done").read_text() == "yes"
    assert agree_with_rank_zero(True, "cpu") is True and agree_with_rank_zero(False, "cpu") is False


# A rank as its own interpreter (multiprocessing's children skip atexit): it joins a gloo group the way the recipes
# do, gathers, and reports, from an exit hook registered before ours (so it runs after), whether the group was alive.
_EXITING_RANK = """
import atexit, gc, sys
import torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
atexit.register(lambda: print("group alive at exit:", dist.is_initialized(), "| DDP wrappers alive:",
                              sum(isinstance(o, DistributedDataParallel) for o in gc.get_objects()), flush=True))
if sys.argv[2] == "trainer":  # what train() and the recipes do: the trainer's arguments join the group
    from datasets import Dataset
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
    from st_contrastive.config.training import TrainSettings
    from st_contrastive.training.trainer import ContrastiveTrainer
    model = SentenceTransformer(sys.argv[4])
    ContrastiveTrainer(model=model, args=TrainSettings(output_dir=sys.argv[3]).training_arguments(),
                       train_dataset=Dataset.from_dict({"anchor": ["a"], "positive": ["b"]}),
                       loss=MultipleNegativesRankingLoss(model))
else:  # what a parse cache or a tokenizer written once does
    from st_contrastive.distributed import main_process_first
    with main_process_first():
        pass
gathered = [torch.zeros(1) for _ in range(2)]
dist.all_gather(gathered, torch.ones(1))
# A trained DDP wrapper left in a reference cycle, as the trainer leaves it (trainer <-> its callbacks): its reducer
# keeps the C++ group and its gloo threads alive after destroy_process_group() unless the cycle is collected first.
net = DistributedDataParallel(torch.nn.Linear(2, 2))
net(torch.ones(1, 2)).sum().backward()
cycle = {"ddp": net}
cycle["self"] = cycle
del net, cycle
if sys.argv[1] == "fail":
    raise RuntimeError("a rank's uncaught error")
"""


def _exit_both_ranks(outcome: str, join: str, folder, model: str) -> list[str]:
    port = _free_port()
    ranks = [
        subprocess.Popen(
            [sys.executable, "-c", _EXITING_RANK, outcome, join, str(folder), model],
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=os.environ
            | {
                "RANK": str(rank),
                "LOCAL_RANK": str(rank),
                "WORLD_SIZE": "2",
                "LOCAL_WORLD_SIZE": "2",
                "MASTER_ADDR": "127.0.0.1",
                "MASTER_PORT": str(port),
            },
        )
        for rank in (0, 1)
    ]
    return [rank.communicate(timeout=120)[0].strip() for rank in ranks]


@pytest.mark.parametrize("join", ["trainer", "main_process_first"])
def test_every_rank_destroys_its_process_group_when_it_exits(join, tmp_path, tiny_mlm_dir):
    assert (
        _exit_both_ranks("finish", join, tmp_path, tiny_mlm_dir)
        == ["group alive at exit: False | DDP wrappers alive: 0"] * 2
    )


def test_a_rank_that_fails_leaves_its_group_to_the_launcher(tmp_path, tiny_mlm_dir):
    # Joined through main_process_first: the same exit hook as the trainer's, without importing the trainer.
    assert (
        _exit_both_ranks("fail", "main_process_first", tmp_path, tiny_mlm_dir)
        == ["group alive at exit: True | DDP wrappers alive: 1"] * 2
    )
