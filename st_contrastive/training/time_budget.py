"""Training for a number of seconds instead of steps, the learning rate's warm-up and decay run on the clock.

Objectives that cost very different amounts per step (DeCLUTR's spans, SimCSE's sentences, TSDAE's decoder, CT's
second encoder) are compared at equal wall time. With a schedule counted in steps, each would need its step count
guessed in advance for its learning rate to reach zero as time runs out; on the clock each does, whatever its step
costs. Only the seconds inside the training loop count (not loading, data preparation or evaluation).
"""

from __future__ import annotations

import time

from transformers import TrainerCallback


class TimeBudget(TrainerCallback):
    """Stops training after ``seconds``; :meth:`factor` is the learning rate's multiplier at this moment: a linear
    warm-up over the first ``warmup_ratio`` of the seconds, then a linear decay to zero at the last."""

    def __init__(self, seconds: float, warmup_ratio: float) -> None:
        self.seconds = seconds
        self.warmup_ratio = warmup_ratio
        self.start: float | None = None

    def elapsed_share(self) -> float:
        return 0.0 if self.start is None else (time.perf_counter() - self.start) / self.seconds

    def factor(self, _step: int = 0) -> float:
        share = self.elapsed_share()
        if share < self.warmup_ratio:
            return share / self.warmup_ratio
        return max(0.0, (1.0 - share) / (1.0 - self.warmup_ratio))

    def on_train_begin(self, args, state, control, **kwargs):
        self.start = time.perf_counter()

    def on_step_end(self, args, state, control, **kwargs):
        if self.elapsed_share() >= 1.0:
            control.should_training_stop = True
