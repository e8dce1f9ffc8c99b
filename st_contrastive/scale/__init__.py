"""SCALe's algorithm as plain functions: a round's training (:func:`train_round`, SupCon + CE over dropout views, CE
only, or siamese pre-training) and the acquisition of the next rows to label (:func:`acquire`). Its settings,
:class:`~st_contrastive.config.scale.RoundTraining`, import no torch.

The loop around them (rounds, oracles, run folders, the labelling page) is the application's,
:mod:`st_contrastive.active`; this package never imports it.
"""

from st_contrastive.config.scale import ACQUISITIONS, OBJECTIVES, RoundTraining
from st_contrastive.scale.acquisition import Acquired, PoolModel, acquire
from st_contrastive.scale.round_training import RoundModel, round_steps, train_round

__all__ = [
    "ACQUISITIONS",
    "OBJECTIVES",
    "Acquired",
    "PoolModel",
    "RoundModel",
    "RoundTraining",
    "acquire",
    "round_steps",
    "train_round",
]
