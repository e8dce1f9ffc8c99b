"""Ctrl-C during training: stop after the step in progress, save a checkpoint there, and say where it is.

The first Ctrl-C lets the step finish (a checkpoint written mid-step would hold half-updated weights), saves a
checkpoint and ends training with :class:`TrainingInterrupted`; a second Ctrl-C interrupts at once (the last
checkpoint saved before stays the resume point). Only the main thread of a single process catches the signal:
under torchrun / accelerate the launcher owns Ctrl-C, and a thread cannot install signal handlers.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from transformers import TrainerCallback

from st_contrastive.checkpoints import CHECKPOINTS_FOLDER, latest_complete_checkpoint
from st_contrastive.distributed import is_distributed


class TrainingInterrupted(KeyboardInterrupt):
    """Training stopped by Ctrl-C after ``step`` steps; ``checkpoint`` is the latest complete one (None when there
    is none), ``run`` the folder a recipe resumes from (the parent of ``checkpoints/``)."""

    def __init__(self, step: int, output_dir: str | Path):
        self.step = step
        self.checkpoint = latest_complete_checkpoint(output_dir)
        output_dir = Path(output_dir)
        self.run = output_dir.parent if output_dir.name == CHECKPOINTS_FOLDER else output_dir
        saved = f"checkpoint at step {self.resume_step}" if self.checkpoint else "no checkpoint"
        super().__init__(f"interrupted at step {step} ({saved} in {output_dir})")

    @property
    def resume_step(self) -> int | None:
        return int(self.checkpoint.name.rsplit("-", 1)[1]) if self.checkpoint else None


class StopOnInterrupt(TrainerCallback):
    """Ends training at the end of the step during which Ctrl-C came, saving a checkpoint there when ``save``."""

    def __init__(self, save: bool = True) -> None:
        self.save = save
        self.requested = False

    def on_step_end(self, args, state, control, **kwargs):
        if self.requested:
            control.should_training_stop = True
            control.should_save = control.should_save or self.save
        return control


@contextmanager
def stop_after_step_on_interrupt(callback: StopOnInterrupt) -> Iterator[None]:
    """While the block trains, a first Ctrl-C asks ``callback`` to stop after the step; a second one raises
    ``KeyboardInterrupt`` at once. Where Ctrl-C is ignored, or cannot be caught here, nothing changes."""
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or is_distributed() or previous == signal.SIG_IGN:
        yield
        return

    def first_interrupt(signum, frame):
        callback.requested = True
        signal.signal(signal.SIGINT, signal.default_int_handler)
        what = "stopping after this step to save a checkpoint" if callback.save else "stopping after this step"
        print(f"\nCtrl-C: {what}; press it again to stop at once", file=sys.stderr, flush=True)

    signal.signal(signal.SIGINT, first_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def train_until_done_or_interrupted(
    trainer, interrupt: StopOnInterrupt, resume_from: str | Path | None, output_dir: str | Path
):
    """``trainer.train`` from ``resume_from`` (or step 0), with ``interrupt`` among its callbacks; returns what it
    returns. Ctrl-C ends it with :class:`TrainingInterrupted` naming the step and where to resume from."""
    with stop_after_step_on_interrupt(interrupt):
        try:
            output = trainer.train(resume_from_checkpoint=str(resume_from) if resume_from else None)
        except KeyboardInterrupt as error:  # a second Ctrl-C: the last checkpoint saved before is the resume point
            raise TrainingInterrupted(trainer.state.global_step, output_dir) from error
    if interrupt.requested:
        raise TrainingInterrupted(trainer.state.global_step, output_dir)
    return output
