"""A round's SCALe loss is built from the round's settings."""

import pytest

from st_contrastive.active.objectives import train_round
from st_contrastive.config.active_learning import RoundTraining
from st_contrastive.losses import scale

TEXTS = ["Who wrote Hamlet ?", "Where is Lima ?", "Who painted it ?", "Where is Rome ?"]
LABELS = [0, 1, 0, 1]


@pytest.mark.parametrize("objective", ["supcon-ce", "ce"])
def test_a_round_trains_with_its_label_smoothing(objective, base_model, tmp_path, monkeypatch):
    built = []

    class Recorded(scale.SCALeLoss):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            built.append(self)

    monkeypatch.setattr(scale, "SCALeLoss", Recorded)  # the real loss, its instances kept to be read
    training = RoundTraining(
        epochs=1, from_base_epochs=1, min_steps=1, min_steps_per_class=0, batch_size=4, label_smoothing=0.1
    )
    model = train_round(objective, base_model, TEXTS, LABELS, ["who", "where"], training, tmp_path / "round", seed=0)
    assert model.steps == 1 and [loss.label_smoothing for loss in built] == [0.1]
    with pytest.raises(ValueError, match=r"label_smoothing=1: must be in \[0, 1\)"):
        RoundTraining(label_smoothing=1)
