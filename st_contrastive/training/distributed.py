"""Which process of a `torchrun` / `accelerate launch` job this is, read from the variables both launchers set.

The launchers start one process per device and the trainer (through accelerate) joins them into DDP. A recipe
needs only two more facts: whether it runs on several processes (then its contrastive loss gathers candidates
from every rank) and whether it is the main process (the only one that evaluates and writes the run). Both come
from the environment, so they are known before the trainer has created the process group.
"""

from __future__ import annotations

import os


def world_size() -> int:
    """How many processes train together (1 when not launched by torchrun or accelerate)."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def is_distributed() -> bool:
    """Whether several processes train together, so losses should set ``gather_across_devices=True``."""
    return world_size() > 1


def is_main_process() -> bool:
    """Whether this is global rank 0, the process that evaluates, saves the model and writes results."""
    return int(os.environ.get("RANK", "0")) == 0
