"""predictions.csv: every row with the label given to it, the round model's prediction and its probabilities."""

import pytest
from support_tickets import ARM

from st_contrastive.active import ArmState
from st_contrastive.active.predictions import standing_labels, write_predictions
from st_contrastive.data.table_file import read_rows
from st_contrastive.scale.round_training import RoundModel


def test_every_row_gets_the_models_label_and_probabilities_beside_the_given_one(human_run, tmp_path):
    model_dir = f"{human_run}/{ARM}/model"
    texts = ["I was charged twice", "=HYPERLINK(1)", "The app crashes"]
    path = write_predictions(tmp_path / "predictions.csv", model_dir, texts, {1: "bug", 2: "(ignored)"})
    rows = read_rows(path)
    model = RoundModel.load(model_dir)
    probabilities = model.proba(texts)
    names = model.classifier.labels
    assert list(rows[0]) == ["id", "text", "label", "predicted", "probability", *(f"p({n})" for n in names)]
    assert [row["label"] for row in rows] == ["", "bug", "(ignored)"]
    assert rows[1]["text"] == "'=HYPERLINK(1)"  # a spreadsheet shows it, never runs it
    for row, p in zip(rows, probabilities, strict=True):
        assert row["predicted"] == names[p.argmax()] and float(row["probability"]) == pytest.approx(p.max(), abs=1e-4)
        assert [float(row[f"p({n})"]) for n in names] == pytest.approx(p, abs=1e-4)


def test_the_standing_labels_of_a_state_are_names_and_ignored_rows():
    state = ArmState("ce", "kmeans", 0, labelled={3: 1, 5: 0}, ignored=[7])
    assert standing_labels(state, ["billing", "bug"]) == {3: "bug", 5: "billing", 7: "(ignored)"}
