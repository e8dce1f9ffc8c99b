"""Two gloo ranks started once for the whole session, which run the DDP checks that tests hand them.

Starting a rank costs about 7 s on 2 cores (importing torch, transformers and sentence-transformers), more than
most checks it runs; one pair of ranks, joined into one process group, serves every test that asks for the
``two_ranks`` fixture. A check is a module-level function ``check(rank, *args)`` that finds the group already
initialized and leaves it so; both ranks run it, and the fixture returns their results in rank order.

A check that raises on one rank can leave the other inside a collective: the pair is then ended, the test fails
with the rank's traceback, and the next test that asks gets a fresh pair. A rank that dies fails the test at once.

A check travels as its module's name, file and function name, and a rank loads that file under that name: pytest's
importlib mode (setup.cfg) names a test module after its path (``tests.losses.test_contrastive_core``), a name that
a fresh process cannot import (another ``tests`` package may come first on its path).
"""

from __future__ import annotations

import importlib.util
import os
import pickle
import queue
import sys
import time
import traceback

import torch.multiprocessing as mp

WORLD_SIZE = 2
# The longest check (every objective of test_ddp_equivalence) takes about 20 s on 2 quiet cores.
CHECK_TIMEOUT_S = 600


def _check_function(module: str, file: str, name: str):
    """The function ``name`` of the test module ``module``, loaded from ``file`` under that name in this process."""
    if module not in sys.modules:
        spec = importlib.util.spec_from_file_location(module, file)
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[module] = loaded
        try:
            spec.loader.exec_module(loaded)
        except BaseException:
            del sys.modules[module]
            raise
    return getattr(sys.modules[module], name)


def _serve(rank: int, init_file: str, tasks, results) -> None:
    import torch.distributed as dist

    os.environ.update(
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        WORLD_SIZE=str(WORLD_SIZE),
        LOCAL_WORLD_SIZE=str(WORLD_SIZE),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT="0",
        HF_HUB_OFFLINE="1",
    )
    # A file store, not a port picked and released before the ranks bind it (another process could take it); the
    # trainers of the checks join this group through accelerate instead of creating their own.
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=WORLD_SIZE)
    try:
        while (task := tasks.get()) is not None:
            (module, file, name), args = task
            try:
                check = _check_function(module, file, name)
                # Pickled here: tensors then travel as bytes, not as shared memory that needs a file descriptor each.
                results.put((rank, True, pickle.dumps(check(rank, *args))))
            except BaseException:  # noqa: BLE001 - the test reports it
                results.put((rank, False, traceback.format_exc()))
    finally:
        dist.destroy_process_group()


class TwoRanks:
    """The pair of ranks; ``run(check, *args)`` runs ``check(rank, *args)`` on both and returns both results."""

    def __init__(self, folder) -> None:
        self.folder, self.starts, self.processes = folder, 0, []

    def _start(self) -> None:
        self.starts += 1
        context = mp.get_context("spawn")
        self.results = context.Queue()
        self.tasks = [context.Queue() for _ in range(WORLD_SIZE)]
        init_file = str(self.folder / f"gloo-init-{self.starts}")
        self.processes = [
            context.Process(target=_serve, args=(rank, init_file, self.tasks[rank], self.results), daemon=True)
            for rank in range(WORLD_SIZE)
        ]
        for process in self.processes:
            process.start()

    def run(self, check, *args) -> list:
        if not self.processes:
            self._start()
        where = (check.__module__, check.__code__.co_filename, check.__qualname__)
        for tasks in self.tasks:
            tasks.put((where, args))
        answers, deadline = {}, time.monotonic() + CHECK_TIMEOUT_S
        while len(answers) < WORLD_SIZE:
            try:
                rank, ok, value = self.results.get(timeout=5)
            except queue.Empty:
                dead = [rank for rank, process in enumerate(self.processes) if not process.is_alive()]
                if dead or time.monotonic() > deadline:
                    self.close()
                    why = f"rank {dead[0]} died" if dead else f"did not finish on both ranks in {CHECK_TIMEOUT_S} s"
                    raise AssertionError(f"{check.__name__} {why}") from None
                continue
            if not ok:
                self.close()
                raise AssertionError(f"rank {rank} failed in {check.__name__}:\n{value}")
            answers[rank] = pickle.loads(value)
        return [answers[rank] for rank in range(WORLD_SIZE)]

    def close(self) -> None:
        for process, tasks in zip(self.processes, self.tasks):
            if process.is_alive():
                tasks.put(None)
        for process in self.processes:
            process.join(timeout=30)
            if process.is_alive():
                process.kill()
        self.processes = []
