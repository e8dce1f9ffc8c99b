"""Which process of a `torchrun` / `accelerate launch` job this is, read from the variables both launchers set.

The launchers start one process per device and the trainer (through accelerate) joins them into DDP. A recipe
needs only two more facts: whether it runs on several processes (then its contrastive loss gathers candidates
from every rank) and whether it is the main process (the only one that evaluates and writes the run). Both come
from the environment, so they are known before the trainer has created the process group.
"""

from __future__ import annotations

import atexit
import functools
import gc
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

# A comparison (ablation, sweep, chain) trains its runs on every rank, and between them rank 0 alone evaluates and
# writes while the others wait; on CPUs a transfer evaluation can outlast torch's default 30-minute timeout.
COMPARISON_TIMEOUT = timedelta(hours=12)


def world_size() -> int:
    """How many processes train together (1 when not launched by torchrun or accelerate)."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def is_distributed() -> bool:
    """Whether several processes train together, so losses should set ``gather_across_devices=True``."""
    return world_size() > 1


def has_accelerator() -> bool:
    """Whether torch sees a GPU (CUDA, XPU or MPS); without one, training says ``use_cpu`` outright."""
    import torch

    return (
        torch.cuda.is_available()
        or (hasattr(torch, "xpu") and torch.xpu.is_available())
        or torch.backends.mps.is_available()
    )


def is_main_process() -> bool:
    """Whether this is global rank 0, the process that evaluates, saves the model and writes results."""
    return int(os.environ.get("RANK", "0")) == 0


def agree_with_rank_zero(decision: bool, device) -> bool:
    """Rank 0's ``decision`` on every rank (a stop on a wall-clock limit, which each rank's clock would judge a
    little differently); ``device`` is where the backend wants the flag (a GPU for NCCL). One process: its own."""
    import torch
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() < 2:
        return decision
    flag = torch.tensor([int(decision)], device=device)
    dist.broadcast(flag, src=0)
    return bool(flag.item())


@contextmanager
def main_process_first() -> Iterator[None]:
    """Run the block on global rank 0 first and on the other ranks once it is done, so that they read what rank 0
    wrote (a parse cache, a trained tokenizer) instead of writing the same files at once. One process: just run it.

    It joins the process group through accelerate's ``PartialState``, which the trainer's arguments then reuse.
    Global, not per node: on several nodes the output folder is expected on a shared filesystem.
    """
    if not is_distributed():
        yield
        return
    with _process_group().main_process_first():
        yield


def join_for_comparison() -> None:
    """Under torchrun / accelerate: join the process group now, with :data:`COMPARISON_TIMEOUT`, before a
    comparison's first evaluation (the trainers of its runs then reuse this group). One process: nothing."""
    if is_distributed():
        _process_group(timeout=COMPARISON_TIMEOUT)


def wait_for_rank_zero() -> None:
    """Under torchrun / accelerate: every rank waits here until all arrive, rank 0 last once it has evaluated and
    written a run that the others are about to read (a checkpoint, a results file). One process: nothing."""
    if is_distributed():
        _process_group().wait_for_everyone()


@functools.cache  # one exit hook, however often a process joins (each run of a comparison does)
def leave_process_group_at_exit() -> None:
    """Under torchrun / accelerate: destroy the process group when this process exits, whichever rank. Called
    wherever the package joins the group: :func:`_process_group` and :class:`ContrastiveTrainer` (whose arguments
    joined it).

    A rank that leaves with its group still alive can abort in the interpreter's teardown ("terminate called
    without an active exception": a gloo worker thread frees a finished work, whose thread-local state holds a Python
    object, and cannot take the GIL), and the launcher then kills the rank still saving the run. After an uncaught
    error the group is left alone: the other ranks may still be inside a collective, which NCCL's teardown would
    wait on, and the launcher ends the job anyway. One process: nothing.
    """
    if is_distributed():
        atexit.register(_destroy_process_group)


def _destroy_process_group() -> None:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized() and getattr(sys, "last_value", None) is None:
        # destroy_process_group() only forgets the group: a DistributedDataParallel wrapper still alive keeps the C++
        # group and its gloo worker threads running into interpreter finalization, where a worker freeing its last
        # work needs the GIL and aborts the process. The trainer holds its wrapper in a reference cycle (trainer and
        # callbacks), so collect it first: the group then ends here, while the interpreter is whole.
        gc.collect()
        dist.destroy_process_group()


def _process_group(**kwargs):
    """accelerate's ``PartialState``, which joins the launcher's processes on first use (the trainer's arguments
    reuse it; ``kwargs`` such as ``timeout`` apply only then). ``cpu=True`` without a GPU, as the trainer's arguments
    say it: otherwise accelerate would not join the processes."""
    from accelerate import PartialState

    leave_process_group_at_exit()
    return PartialState(cpu=not has_accelerator(), **kwargs)
