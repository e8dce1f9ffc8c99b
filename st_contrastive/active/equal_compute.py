"""Equal compute (``--equal-compute``): SupCon + CE and CE only, each round, trained for as long as SetFit at its
defaults took on that round, rather than for the same number of steps.

The budget of round ``r`` is the ``setfit-defaults`` arm's training wall time in round ``r`` (its model loading,
pair sampling, body and head). It becomes steps at the pace of the equal-step arm of the same objective in the
same round: its optimisation seconds per step (the trainer's loop alone). Rounded up, so an equal-compute arm
trains at least as long as SetFit did; it never trains fewer steps than the equal-step arm.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from st_contrastive.active.state import ArmState

SUFFIX = "-equal-compute"  # supcon-ce-equal-compute: the arm's name in the run folder and the tables


def equal_compute_steps(budget_seconds: float, seconds_per_step: float, usual_steps: int) -> int:
    """The fewest steps that take ``budget_seconds`` at ``seconds_per_step``, and at least the usual round's."""
    if seconds_per_step <= 0:
        raise ValueError(f"seconds per step must be positive, got {seconds_per_step}")
    return max(usual_steps, math.ceil(budget_seconds / seconds_per_step - 1e-9))


def epochs(steps: int, labelled: int, batch_size: int) -> float:
    """Passes over ``labelled`` rows that ``steps`` batches of ``batch_size`` make."""
    return round(steps / math.ceil(labelled / batch_size), 2)


@dataclass
class SetFitTimeBudget:
    """The steps of each round of an equal-compute arm. ``budget``: the ``setfit-defaults`` arm (its training
    seconds per round); ``pace``: the equal-step arm of the same objective, acquisition and seed."""

    budget: ArmState
    pace: ArmState

    def seconds(self, round_number: int) -> float:
        return self.budget.rounds[round_number]["train_seconds"]

    def seconds_per_step(self, round_number: int) -> float:
        record = self.pace.rounds[round_number]
        if not record.get("steps") or "optimisation_seconds" not in record:
            raise ValueError(
                f"{self.pace.objective}-{self.pace.acquisition}-seed{self.pace.seed} round "
                f"{round_number} has no step timing (a run from an older version): start again in a new `output`"
            )
        return max(record["optimisation_seconds"], 1e-3) / record["steps"]

    def steps(self, round_number: int) -> int:
        """The round's steps: SetFit's seconds at the equal-step arm's pace, never fewer than that arm's steps."""
        return equal_compute_steps(
            self.seconds(round_number), self.seconds_per_step(round_number), self.pace.rounds[round_number]["steps"]
        )
