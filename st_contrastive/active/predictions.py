"""What a person labelling a few texts of many came for: the model's label, with its probabilities, for every row."""

from __future__ import annotations

from pathlib import Path

from st_contrastive.active.oracle import IGNORED
from st_contrastive.data.table_file import write_csv_atomically

PREDICTIONS = "predictions.csv"


def write_predictions(
    path: str | Path, model_dir: str | Path, texts: list[str], given: dict[int, str], batch_size: int = 64
) -> Path:
    """``predictions.csv``: every row of ``texts`` with the label a person gave it (``given``: row id -> label name,
    or ``(ignored)``), the label the model in ``model_dir`` predicts, its probability, and one probability column per
    label."""
    from st_contrastive.scale.round_training import RoundModel

    model = RoundModel.load(model_dir)
    model.batch_size = batch_size
    probabilities = model.proba(texts)
    names = model.classifier.labels
    rows = [
        {
            "id": i,
            "text": text,
            "label": given.get(i, ""),
            "predicted": names[int(p.argmax())],
            "probability": round(float(p.max()), 4),
        }
        | {f"p({name})": round(float(q), 4) for name, q in zip(names, p, strict=True)}
        for i, (text, p) in enumerate(zip(texts, probabilities, strict=True))
    ]
    columns = ("id", "text", "label", "predicted", "probability", *(f"p({name})" for name in names))
    write_csv_atomically(path, columns, rows)
    return Path(path)


def standing_labels(state, label_names: list[str]) -> dict[int, str]:
    """The labels an arm's state holds, by row id, as names (ignored rows as ``(ignored)``)."""
    return {i: label_names[label] for i, label in state.labelled.items()} | {i: IGNORED for i in state.ignored}
