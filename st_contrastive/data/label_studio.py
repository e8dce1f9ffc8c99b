"""Label Studio's JSON task files for text classification: a project's export read as texts with or without a label,
and texts written as a file to import, with their labels as annotations and a model's guesses as predictions.

The format is Label Studio's own (https://labelstud.io/guide/export, JSON; https://labelstud.io/guide/predictions):
a list of tasks, each ``{"id", "data": {KEY: text}, "annotations": [{"result": [...], "was_cancelled",
"updated_at"}], "predictions": [{"result": [...], "score", "model_version"}]}``, a label being a ``choices`` result.
No library reads it for us: label-studio-sdk is a client of a running server, and these files need none.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from st_contrastive.data.table_file import label_order

# The names a labelling interface gives its <Choices> and <Text> tags, and the task's data key, unless told others.
FROM_NAME, TO_NAME, TEXT_KEY = "label", "text", "text"
# The key of a task's data that holds the row of the run it stands for (how a backend maps a task back to the run).
ROW_KEY = "row"
# An annotation without a time sorts before every timed one (then by its place in the list).
NO_TIME = datetime.min.replace(tzinfo=UTC)


@dataclass(frozen=True)
class LabelStudioExport:
    """One row per task, in the file's order: its text, its label (None: no annotation kept, the pool) and its id
    (its position where the file gives none); ``label_names`` is the label set, ``text_key`` the data key read."""

    texts: list[str]
    labels: list[str | None]
    label_names: list[str]
    task_ids: list[int]
    text_key: str

    def rows(self) -> list[dict]:
        """The rows as a table file's (``text``, ``label``: empty where unlabelled)."""
        return [{"text": text, "label": label or ""} for text, label in zip(self.texts, self.labels, strict=True)]


def _tasks(path: Path) -> list | None:
    """The file's tasks when it reads as a Label Studio JSON export (a list of objects, each with ``data`` an object),
    else None."""
    if path.suffix.lower() != ".json" or not path.is_file():
        return None
    try:
        tasks = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if isinstance(tasks, list) and all(isinstance(task, dict) and isinstance(task.get("data"), dict) for task in tasks):
        return tasks
    return None


def is_label_studio_export(path: str | Path) -> bool:
    """A ``.json`` file whose top level is a non-empty list of tasks with ``data``: what Label Studio exports as
    JSON (a JSON-lines file named ``.json`` is not one)."""
    return bool(_tasks(Path(path)))


def read_label_studio_export(path: str | Path, label_names: Sequence[str] | None = None) -> LabelStudioExport:
    """The tasks of a Label Studio JSON export, one row each.

    A task's label is the choice of its latest annotation that was not cancelled (skipped), by ``updated_at`` (or
    ``created_at``) and then by place in the list; a task without one is unlabelled. That annotation must hold one
    ``choices`` result with one choice. The text is ``data["text"]`` where the tasks have that key, else ``data[KEY]``
    for the one key whose values are texts in every task. ``label_names`` fixes the label set and its order; by default it is the
    sorted labels the tasks use (numbers in number order), as for a table file.
    """
    path = Path(path)
    tasks = _tasks(path)
    if tasks is None:
        raise ValueError(
            f'{path}: not a Label Studio JSON export (a list of tasks with "data"); export the project as JSON'
        )
    if not tasks:
        raise ValueError(f"{path}: no tasks (the Label Studio export is an empty list)")
    text_key = _text_key(tasks, path)
    texts, labels, ids = [], [], []
    for position, task in enumerate(tasks):
        where = f"{path}, task {task.get('id', f'#{position + 1}')}"
        text = task["data"].get(text_key)
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{where}: no text in data.{text_key} (got {text!r})")
        label = _label(task, where)
        if label is not None and label_names is not None and label not in label_names:
            raise ValueError(
                f"{where}: its annotation's choice {label!r} is not one of {list(label_names)} "
                "(change the annotation or `label_names`)"
            )
        texts.append(text)
        labels.append(label)
        ids.append(task.get("id", position))
    names = (
        list(label_names) if label_names is not None else sorted({x for x in labels if x is not None}, key=label_order)
    )
    return LabelStudioExport(texts, labels, names, ids, text_key)


def _text_key(tasks: list[dict], path: Path) -> str:
    """``text`` where a task's data has it (a task without a text in it is then an error of its own), else the one
    data key whose values are texts in every task."""
    if any(TEXT_KEY in task["data"] for task in tasks):
        return TEXT_KEY
    keys = [key for key in tasks[0]["data"] if all(isinstance(task["data"].get(key), str) for task in tasks)]
    if len(keys) == 1:
        return keys[0]
    found = sorted({key for task in tasks for key in task["data"]})
    raise ValueError(
        f"{path}: no single text field in the tasks' data (keys {found}); keep one field of text in every task, "
        f"or name it {TEXT_KEY!r}"
    )


def _label(task: dict, where: str) -> str | None:
    """The choice of the task's latest annotation that was not cancelled, or None."""
    kept = [a for a in task.get("annotations") or [] if not a.get("was_cancelled")]
    if not kept:
        return None
    latest = max(enumerate(kept), key=lambda pair: (_time(pair[1], where), pair[0]))[1]
    choices = [item for item in latest.get("result") or [] if item.get("type") == "choices"]
    count = sum(len((item.get("value") or {}).get("choices") or []) for item in choices)
    if len(choices) != 1 or count != 1:
        found = "no choices result" if not choices else f"{count} choices in {len(choices)} choices results"
        raise ValueError(
            f"{where}: its latest annotation has {found}; a text-classification task takes exactly one choice "
            '(a <Choices> tag with choice="single")'
        )
    return choices[0]["value"]["choices"][0]


def _time(annotation: dict, where: str) -> datetime:
    """When the annotation was last saved (Label Studio writes ISO 8601 times; one without a zone is UTC)."""
    value = annotation.get("updated_at") or annotation.get("created_at")
    if not value:
        return NO_TIME
    try:
        when = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: an annotation's time {value!r} is not an ISO 8601 time") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def choices_result(label: str, *, from_name: str, to_name: str) -> list[dict]:
    """A ``choices`` result: the labelled (or predicted) choice of a <Choices> tag over a <Text> tag."""
    return [{"from_name": from_name, "to_name": to_name, "type": "choices", "value": {"choices": [label]}}]


def label_studio_tasks(
    texts: Sequence[str],
    *,
    labels: Sequence[str | None] | None = None,
    predictions: Sequence[tuple[str, float] | None] | None = None,
    from_name: str,
    to_name: str,
    text_key: str = TEXT_KEY,
    model_version: str | None = None,
    row_ids: Sequence[int] | None = None,
) -> list[dict]:
    """Tasks to import into Label Studio, one per text: ``data`` holds the text under ``text_key`` and its row
    (``row_ids``, by default its position: how a backend finds the row again); a label (where ``labels`` gives one)
    becomes an annotation, and a prediction ``(label, score)`` (where ``predictions`` gives one) a prediction of
    ``model_version``."""
    for name, values in (("labels", labels), ("predictions", predictions), ("row_ids", row_ids)):
        if values is not None and len(values) != len(texts):
            raise ValueError(f"{name}: {len(values)} values for {len(texts)} texts; give one per text (None: none)")
    if predictions is not None and not model_version:
        raise ValueError("model_version: predictions need one (Label Studio groups and orders them by it)")
    tasks = []
    for position, text in enumerate(texts):
        row = row_ids[position] if row_ids is not None else position
        task: dict = {"data": {text_key: text, ROW_KEY: row}}
        if labels is not None and labels[position] is not None:
            task["annotations"] = [{"result": choices_result(labels[position], from_name=from_name, to_name=to_name)}]
        if predictions is not None and predictions[position] is not None:
            label, score = predictions[position]
            result = choices_result(label, from_name=from_name, to_name=to_name)
            task["predictions"] = [{"model_version": model_version, "score": float(score), "result": result}]
        tasks.append(task)
    return tasks


def label_config(
    label_names: Sequence[str], *, from_name: str = FROM_NAME, to_name: str = TO_NAME, text_key: str = TEXT_KEY
) -> str:
    """A labelling interface for these tasks: the text, and one choice per label (Settings > Labeling Interface >
    Code in Label Studio)."""
    from xml.sax.saxutils import quoteattr

    choices = "\n".join(f"    <Choice value={quoteattr(name)}/>" for name in label_names)
    return (
        f"<View>\n  <Text name={quoteattr(to_name)} value={quoteattr('$' + text_key)}/>\n"
        f'  <Choices name={quoteattr(from_name)} toName={quoteattr(to_name)} choice="single" showInLine="true">\n'
        f"{choices}\n  </Choices>\n</View>\n"
    )
