"""The active-learning application around SCALe's rounds (:mod:`st_contrastive.scale`): the loop over rounds, its
oracles (simulated from gold labels, or a person), run folders that resume, and the labelling page.

Names are imported on first use, so ``st_contrastive.active.settings`` (no torch) keeps ``--help`` instant.
"""

import importlib

_EXPORTS = {
    "ActiveLearningConfig": "st_contrastive.active.settings",
    "ArmState": "st_contrastive.active.state",
    "AwaitingLabels": "st_contrastive.active.oracle",
    "HumanOracle": "st_contrastive.active.oracle",
    "Pending": "st_contrastive.active.state",
    "SimulatedOracle": "st_contrastive.active.oracle",
    "round_sizes": "st_contrastive.active.loop",
    "run_active_learning": "st_contrastive.active.loop",
}
__all__ = [
    "ActiveLearningConfig",
    "ArmState",
    "AwaitingLabels",
    "HumanOracle",
    "Pending",
    "SimulatedOracle",
    "round_sizes",
    "run_active_learning",
]


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
