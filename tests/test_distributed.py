"""The helpers a recipe uses under torchrun / accelerate, on two real gloo processes: rank 0's decision reaches
every rank, and rank 0 runs a block before the others (which then read what it wrote)."""

from __future__ import annotations

import os
import socket

import torch.multiprocessing as mp


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _rank(rank: int, port: int, folder: str, results) -> None:
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2", LOCAL_WORLD_SIZE="2",
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    import time
    from pathlib import Path

    from st_contrastive.training.distributed import agree_with_rank_zero, is_main_process, main_process_first

    shared = Path(folder) / "written-by-rank-0.txt"
    with main_process_first():
        if is_main_process():
            time.sleep(1.0)  # a slow writer: rank 1 must still find the file complete
            shared.write_text("tokenizer")
        seen = shared.read_text() if shared.exists() else None
    results[rank] = {
        "seen": seen,
        # Each rank's own clock says something else; rank 0's verdict is the one every rank acts on.
        "stop_if_rank_0_says": agree_with_rank_zero(rank == 0, "cpu"),
        "stop_if_rank_1_says": agree_with_rank_zero(rank == 1, "cpu"),
    }


def test_rank_zero_writes_first_and_decides_for_every_rank(tmp_path):
    results = mp.Manager().dict()
    mp.spawn(_rank, args=(_free_port(), str(tmp_path), results), nprocs=2, join=True)
    for rank in (0, 1):
        assert results[rank] == {"seen": "tokenizer", "stop_if_rank_0_says": True, "stop_if_rank_1_says": False}


def test_one_process_runs_the_block_and_keeps_its_own_decision(tmp_path, monkeypatch):
    from st_contrastive.training.distributed import agree_with_rank_zero, main_process_first

    monkeypatch.delenv("WORLD_SIZE", raising=False)
    with main_process_first():
        (tmp_path / "done").write_text("yes")
    assert (tmp_path / "done").read_text() == "yes"
    assert agree_with_rank_zero(True, "cpu") is True and agree_with_rank_zero(False, "cpu") is False
