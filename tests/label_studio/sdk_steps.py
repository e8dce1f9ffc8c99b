"""What a person does in Label Studio, through label-studio-sdk (2.1.2, in Label Studio's own venv): one step per
run, its arguments a JSON object, its answer one JSON value on stdout. tests/label_studio_server.py runs it:

    LABEL_STUDIO_URL=http://127.0.0.1:8080 LABEL_STUDIO_API_KEY=TOKEN \\
        .venv-label-studio/bin/python tests/label_studio/sdk_steps.py tasks '{"project": 1}'

Steps: create-project, connect-model, prelabel-with-model, retrieve-predictions, tasks, annotate,
wait-model-version, create-view, next-task, export.
"""

from __future__ import annotations

import json
import os
import sys
import time

import httpx
from label_studio_sdk import LabelStudio

# The Data Manager's "Prediction score" column, as its sort sends it.
BY_PREDICTION_SCORE = "tasks:predictions_score"


def client() -> LabelStudio:
    return LabelStudio(base_url=os.environ["LABEL_STUDIO_URL"], api_key=os.environ["LABEL_STUDIO_API_KEY"])


def create_project(ls: LabelStudio, title: str, label_config: str, tasks_file: str) -> dict:
    """A project with ``label_config`` and the tasks of ``tasks_file`` (Label Studio's JSON import)."""
    project = ls.projects.create(title=title, label_config=label_config)
    with open(tasks_file, encoding="utf-8") as f:
        tasks = json.load(f)
    imported = ls.projects.import_tasks(id=project.id, request=tasks, return_task_ids=True)
    project = ls.projects.get(id=project.id)
    return {
        "project": project.id,
        "tasks": imported.task_count,
        "annotations": imported.annotation_count,
        "predictions": imported.prediction_count,
        "model_version": project.model_version,
    }


def connect_model(ls: LabelStudio, project: int, url: str, title: str = "SCALe") -> dict:
    """Settings > Model > Connect Model: ``url`` (token included). Label Studio checks /health and /setup, and
    creates the project webhook to ``url``/webhook."""
    backend = ls.ml.create(project=project, url=url, title=title)
    hooks = [hook.url for hook in ls.webhooks.list(project=project)]
    return {"id": backend.id, "state": backend.state, "model_version": backend.model_version, "webhooks": hooks}


def prelabel_with_model(ls: LabelStudio, project: int, title: str = "SCALe") -> dict:
    """Settings > Annotation > Prelabeling: the predictions a task opens with are the connected model's (asked for
    its current version), not those of one fixed version (which importing predictions sets)."""
    before = ls.projects.get(id=project).model_version
    ls.projects.update(id=project, model_version=title)
    return {"before": before, "model_version": ls.projects.get(id=project).model_version}


def retrieve_predictions(ls: LabelStudio, project: int, timeout: float = 300) -> dict:
    """The Data Manager's "Retrieve Predictions" on every task: Label Studio asks the model for those without a
    prediction of its current version. Again until every task has one (as a person would click again): Label
    Studio gives a model 1 s to answer its health check, and on a busy machine skips a turn without a word."""
    start, tries = time.monotonic(), 0
    while True:
        tries += 1
        ls.actions.create(
            id="retrieve_tasks_predictions", project=project, selected_items={"all": True, "excluded": []}
        )
        version = ls.ml.list(project=project)[0].model_version
        missing = [
            task.id
            for task in ls.tasks.list(project=project, fields="all")
            if not any(prediction.model_version == version for prediction in task.predictions or [])
        ]
        if not missing:
            return {"model_version": version, "tries": tries}
        if time.monotonic() - start > timeout:
            raise SystemExit(f"tasks {missing} have no prediction of {version} after {tries} tries in {timeout} s")
        time.sleep(1)


def tasks(ls: LabelStudio, project: int, ordering: list[str] | None = None) -> list[dict]:
    """Every task as the Data Manager lists it (sorted by ``ordering``, e.g. ``["tasks:predictions_score"]``): its
    row, text, Prediction score, predictions and annotations."""
    query = json.dumps({"ordering": ordering or []})
    listed = []
    for task in ls.tasks.list(project=project, query=query, fields="all"):
        listed.append(
            {
                "id": task.id,
                "row": task.data.get("row"),
                "text": task.data.get("text"),
                "score": getattr(task, "predictions_score", None),
                "predictions": [
                    {"model_version": p.model_version, "score": p.score, "choices": choices(p.result)}
                    for p in task.predictions or []
                ],
                "annotations": [
                    {"id": a["id"] if isinstance(a, dict) else a.id, "choices": choices(field(a, "result"))}
                    for a in task.annotations or []
                ],
            }
        )
    return listed


def field(item, name):
    return item.get(name) if isinstance(item, dict) else getattr(item, name)


def choices(result) -> list[str]:
    return [choice for item in result or [] for choice in (field(item, "value") or {}).get("choices", [])]


def annotate(ls: LabelStudio, labels: dict[str, str], from_name: str, to_name: str) -> list[dict]:
    """Submit an annotation per task (task id -> label), one after the other, as a person's clicks do."""
    done = []
    for task_id, label in labels.items():
        result = [{"from_name": from_name, "to_name": to_name, "type": "choices", "value": {"choices": [label]}}]
        annotation = ls.annotations.create(id=int(task_id), result=result, was_cancelled=False)
        done.append({"task": int(task_id), "annotation": annotation.id})
    return done


def wait_model_version(ls: LabelStudio, project: int, version: str, timeout: float) -> dict:
    """Until the project's model reports ``version`` (listing the project's models asks each for its version, as
    the Model settings page does); the seconds it took."""
    start = time.monotonic()
    seen = None
    while time.monotonic() - start < timeout:
        backend = ls.ml.list(project=project)[0]
        seen = (backend.model_version, backend.state)
        if backend.model_version == version and backend.state == "CO":
            return {"model_version": version, "seconds": round(time.monotonic() - start, 1)}
        time.sleep(0.5)
    raise SystemExit(f"the model did not reach {version} in {timeout} s (last: version, state {seen})")


def create_view(
    ls: LabelStudio, project: int, title: str, ordering: list[str], hidden: list[str], widths: dict[str, int]
) -> dict:
    """A Data Manager tab sorted by ``ordering``, without the columns ``hidden``, with the column ``widths``."""
    data = {
        "title": title,
        "ordering": ordering,
        "hiddenColumns": {"explore": hidden, "labeling": hidden},
        "columnsWidth": widths,
    }
    view = ls.views.create(project=project, data=data)
    return {"id": view.id}


def next_task(ls: LabelStudio, project: int, view: int) -> dict:
    """The task "Label All Tasks" opens from the Data Manager tab ``view`` (its order), with the predictions the
    labelling view shows for it (the one whose label it chooses in advance). label-studio-sdk has no call for it:
    Label Studio's own API, with the same token."""
    response = httpx.get(
        f"{os.environ['LABEL_STUDIO_URL']}/api/projects/{project}/next",
        params={"view": view},
        headers={"Authorization": f"Token {os.environ['LABEL_STUDIO_API_KEY']}"},
        timeout=120,
    )
    response.raise_for_status()
    task = response.json()
    predictions = [{"model_version": p["model_version"], "choices": choices(p["result"])} for p in task["predictions"]]
    return {"id": task["id"], "row": task["data"].get("row"), "predictions": predictions}


def export(ls: LabelStudio, project: int, output: str) -> dict:
    """The project's JSON export (Export > JSON: every task with its annotations and predictions), to ``output``."""
    exported = ls.projects.exports.as_json(project)
    with open(output, "w", encoding="utf-8") as f:
        json.dump(exported, f)
    return {"tasks": len(exported)}


STEPS = {
    "create-project": create_project,
    "connect-model": connect_model,
    "prelabel-with-model": prelabel_with_model,
    "retrieve-predictions": retrieve_predictions,
    "tasks": tasks,
    "annotate": annotate,
    "wait-model-version": wait_model_version,
    "create-view": create_view,
    "next-task": next_task,
    "export": export,
}


if __name__ == "__main__":
    step, arguments = sys.argv[1], json.loads(sys.argv[2] if len(sys.argv) > 2 else "{}")
    print(json.dumps(STEPS[step](client(), **arguments)))
