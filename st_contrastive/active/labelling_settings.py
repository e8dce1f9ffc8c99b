"""How the labelling page behaves around a person: no torch, so `st-contrastive label --help` is instant."""

from __future__ import annotations

from dataclasses import dataclass, field

from st_contrastive.arguments import at_least, require


@dataclass(frozen=True)
class LabellingSettings:
    """The pause between a round's last label and its training (time to undo that label, or to train at once), and
    the cross-validated accuracy estimate shown per round when the data has no test split."""

    grace_seconds: float = field(
        default=10.0,
        metadata={"help": "seconds between a round's last label and its training, to undo it (0: train at once)"},
    )
    estimate_folds: int = field(
        default=5,
        metadata={
            "help": "folds of the accuracy estimate on the labels so far, when the data has no test split "
            "(0: no estimate; each fold trains a model)"
        },
    )

    def __post_init__(self) -> None:
        at_least("grace_seconds", self.grace_seconds, 0)
        ok = isinstance(self.estimate_folds, int) and (self.estimate_folds == 0 or self.estimate_folds >= 2)
        require("estimate_folds", self.estimate_folds, ok, "must be 0 (no estimate) or at least 2")
