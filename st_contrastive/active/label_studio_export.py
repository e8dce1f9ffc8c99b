"""A run's labels and its model's guesses as a Label Studio import file: every row of the pool as a task, the labels
given so far as annotations, and the latest round model's label for each row as a prediction.

It reads the run folder and nothing else (its files are written atomically): it takes no lock, so it can run beside
the labelling page or the Label Studio backend serving the same run.
"""

from __future__ import annotations

import json
from pathlib import Path

from st_contrastive.active.dataset_fingerprint import FILE as FINGERPRINTS
from st_contrastive.active.dataset_fingerprint import check_unchanged
from st_contrastive.active.loop import arm_name, experiment_data, given_labels
from st_contrastive.active.oracle import IGNORED, queries_path
from st_contrastive.active.predictions import standing_labels
from st_contrastive.active.settings import ActiveLearningConfig
from st_contrastive.active.state import ArmState
from st_contrastive.atomic_files import write_atomically
from st_contrastive.data.label_studio import FROM_NAME, TO_NAME, label_config, label_studio_tasks
from st_contrastive.data.table_file import read_rows, spreadsheet_text


def model_version(rounds: int) -> str:
    """The name Label Studio shows for the model of a run that has trained ``rounds`` rounds."""
    return f"round-{rounds}"


def interface_path(path: str | Path) -> Path:
    """Where :func:`export_run` writes the labelling interface of the tasks file ``path``: beside it."""
    path = Path(path)
    return path.with_name(f"{path.stem}.label-config.xml")


def export_run(
    run_dir: str | Path,
    path: str | Path,
    *,
    from_name: str = FROM_NAME,
    to_name: str = TO_NAME,
    predictions: bool = False,
) -> Path:
    """Write the tasks of the run in ``run_dir`` (``--oracle human``) to ``path`` and return it: each pool row a task
    (``data.row`` its row id), its standing label an annotation (the dataset file's, then every round's queries file:
    the labelling page's and a spreadsheet's record, corrections included), and with ``predictions`` once a round has
    trained, the latest round model's label with its probability as a prediction of model version ``round-N``: for a
    project without the backend, since Label Studio would keep to those imported predictions' version and never ask
    the backend for its own (whose scores are SCALe's order). Rows set aside as
    ``(ignored)`` get no annotation. Beside ``path``, :func:`interface_path` gets the labelling interface whose
    <Choices> are the run's labels."""
    run_dir, path = Path(run_dir), Path(path)
    config = _human_run_config(run_dir)
    data = experiment_data(config)
    if (run_dir / FINGERPRINTS).is_file():  # never written here: an export leaves the run folder as it was
        check_unchanged(run_dir, config.dataset, data.train_texts)  # the labels are row ids of this file
    data = data.subset_pool(config.pool_size, config.seed)  # the rows the loop numbers (one seed: a human run)
    names = data.label_names
    folder = run_dir / "arms" / arm_name(config.objectives[0], config.acquisitions[0], config.seed)
    state = ArmState.load(folder)
    labels = {i: names[label] for i, label in given_labels(config, data).items()}
    guesses, version = None, None
    if state is not None:
        labels |= standing_labels(state, names) | _queried_labels(folder, state, names)
        if predictions and state.rounds:
            guesses, version = _latest_guesses(folder, data.train_texts, config.training.batch_size)
    annotations = [None if labels.get(i) in (None, IGNORED) else labels[i] for i in range(len(data.train_texts))]
    tasks = label_studio_tasks(
        data.train_texts,
        labels=annotations,
        predictions=guesses,
        from_name=from_name,
        to_name=to_name,
        model_version=version,
    )
    write_atomically(path, json.dumps(tasks, indent=1, ensure_ascii=False) + "\n")
    write_atomically(interface_path(path), label_config(names, from_name=from_name, to_name=to_name))
    return path


def _human_run_config(run_dir: Path) -> ActiveLearningConfig:
    path = run_dir / "config.json"
    if not path.is_file():
        raise ValueError(f"{run_dir}: no config.json (not the folder of an active-learning run)")
    config = ActiveLearningConfig.from_json(json.loads(path.read_text()))
    if config.oracle != "human":
        raise ValueError(
            f"{run_dir} is a run with oracle={config.oracle!r}: only a run labelled by people (--oracle human) has "
            "labels to export"
        )
    return config


def _queried_labels(folder: Path, state: ArmState, names: list[str]) -> dict[int, str]:
    """The labels of every round's queries file, by row id: the round being labelled, and corrections of earlier
    rounds that the state takes in only when the next round trains."""
    labels = {}
    last = max(len(state.rounds), state.pending.round if state.pending else 0)
    for round_number in range(last + 1):
        path = queries_path(folder, round_number)
        if not path.is_file():
            continue
        for row in read_rows(path):
            label = spreadsheet_text((row.get("label") or "").strip())
            if not label:
                continue
            if label not in names and label != IGNORED:
                raise ValueError(
                    f"{path}, row id {row['id']}: the label {label!r} is not one of {names} or {IGNORED}; correct it "
                    "in the file"
                )
            labels[int(row["id"])] = label
    return labels


class ModelSwapping(Exception):
    """A round is finishing: its model is being swapped in, so the folder's model and state may not agree."""


def latest_round_model(folder: Path):
    """The latest round model of the arm in ``folder`` (a ``RoundModel``, None before a round has trained) and the
    rounds it stands for. The loop swaps a round's model in while the state says "acquiring" and saves the next
    round's state after it: a model read with no "acquiring" and the same rounds before and after is the one of the
    rounds the state names; otherwise :class:`ModelSwapping`."""
    from st_contrastive.scale.round_training import RoundModel

    before = ArmState.load(folder)
    rounds = len(before.rounds) if before else 0
    if rounds == 0:
        return None, 0
    if before.phase == "acquiring":
        raise ModelSwapping
    try:
        model = RoundModel.load(folder / "model")
    except OSError:
        raise ModelSwapping from None
    after = ArmState.load(folder)
    if after.phase == "acquiring" or len(after.rounds) != rounds:
        raise ModelSwapping
    return model, rounds


def _latest_guesses(folder: Path, texts: list[str], batch_size: int) -> tuple[list[tuple[str, float]], str]:
    """The latest round model's label and probability for every text, and that model's version."""
    try:
        model, rounds = latest_round_model(folder)
    except ModelSwapping:
        raise ValueError(
            f"{folder}: a round is finishing (its model is being swapped in); export again when it is done, or "
            "resume the run if it was stopped"
        ) from None
    model.batch_size = batch_size
    names = model.classifier.labels
    guesses = [(names[int(p.argmax())], round(float(p.max()), 4)) for p in model.proba(texts)]
    return guesses, model_version(rounds)
