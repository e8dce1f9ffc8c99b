"""Training for a number of seconds: the learning rate's warm-up and decay follow the clock, and the loop stops when
the seconds are spent."""

import pytest
from transformers import TrainerControl

from st_contrastive.training import time_budget
from st_contrastive.training.time_budget import TimeBudget


@pytest.fixture
def clock(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(time_budget.time, "perf_counter", lambda: now[0])
    return now


def test_the_rate_warms_up_then_decays_to_zero_on_the_clock(clock):
    budget = TimeBudget(seconds=10, warmup_ratio=0.2)
    assert budget.factor() == 0.0  # before training begins
    budget.on_train_begin(None, None, None)
    factors = []
    for second in (0, 1, 2, 6, 10, 12):
        clock[0] = 100.0 + second
        factors.append(budget.factor())
    assert factors == pytest.approx([0.0, 0.5, 1.0, 0.5, 0.0, 0.0])


def test_the_loop_stops_after_the_step_that_spends_the_seconds(clock):
    budget = TimeBudget(seconds=10, warmup_ratio=0.0)
    budget.on_train_begin(None, None, None)
    control = TrainerControl()
    clock[0] = 109.9
    budget.on_step_end(None, None, control)
    assert not control.should_training_stop
    clock[0] = 110.0
    budget.on_step_end(None, None, control)
    assert control.should_training_stop
