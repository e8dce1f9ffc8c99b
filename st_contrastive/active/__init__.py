"""Active learning for text classification (SCALe): acquisition, oracles, per-round state and the loop."""

from typing import TYPE_CHECKING

from st_contrastive.active.config import ACQUISITIONS, OBJECTIVES, ActiveLearningConfig, RoundTraining
from st_contrastive.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from st_contrastive.active.acquisition import Acquired, PoolModel, acquire
    from st_contrastive.active.loop import round_sizes, run_active_learning
    from st_contrastive.active.objectives import RoundModel, round_steps, train_round
    from st_contrastive.active.oracle import AwaitingLabels, HumanOracle, SimulatedOracle
    from st_contrastive.active.state import ArmState, Pending

# The loop imports torch, sentence-transformers and small-text (seconds); the command line's parser needs none.
__getattr__ = lazy_exports(__name__, {
    "Acquired": "acquisition", "PoolModel": "acquisition", "acquire": "acquisition",
    "round_sizes": "loop", "run_active_learning": "loop",
    "RoundModel": "objectives", "round_steps": "objectives", "train_round": "objectives",
    "AwaitingLabels": "oracle", "HumanOracle": "oracle", "SimulatedOracle": "oracle",
    "ArmState": "state", "Pending": "state",
})

__all__ = ["ACQUISITIONS", "OBJECTIVES", "Acquired", "ActiveLearningConfig", "ArmState", "AwaitingLabels",
           "HumanOracle", "Pending", "PoolModel", "RoundModel", "RoundTraining", "SimulatedOracle", "acquire",
           "round_sizes", "round_steps", "run_active_learning", "train_round"]
