"""Active learning for text classification (SCALe): acquisition, oracles, per-round state and the loop.

This package imports torch, sentence-transformers and small-text; the experiment's settings
(:class:`ActiveLearningConfig`, :class:`RoundTraining`) are declared in :mod:`st_contrastive.config.active_learning`,
which does not.
"""

from st_contrastive.active.acquisition import Acquired, PoolModel, acquire
from st_contrastive.active.loop import round_sizes, run_active_learning
from st_contrastive.active.objectives import RoundModel, round_steps, train_round
from st_contrastive.active.oracle import AwaitingLabels, HumanOracle, SimulatedOracle
from st_contrastive.active.state import ArmState, Pending
from st_contrastive.config.active_learning import ACQUISITIONS, OBJECTIVES, ActiveLearningConfig, RoundTraining

__all__ = [
    "ACQUISITIONS",
    "OBJECTIVES",
    "Acquired",
    "ActiveLearningConfig",
    "ArmState",
    "AwaitingLabels",
    "HumanOracle",
    "Pending",
    "PoolModel",
    "RoundModel",
    "RoundTraining",
    "SimulatedOracle",
    "acquire",
    "round_sizes",
    "round_steps",
    "run_active_learning",
    "train_round",
]
