"""A human-oracle run as a Label Studio import file (`st-contrastive label-studio-export`): every pool row a task,
each label standing so far an annotation, the latest round model's guess for every row a prediction; the command's
refusals; and a Label Studio export starting a run, its annotated tasks the given labels and the others the pool."""

import csv
import json

import pytest
from support_tickets import ARM, SUPPORT, copy_of_run, human_run_command, queries

from st_contrastive.active import ArmState
from st_contrastive.active.oracle import IGNORED
from st_contrastive.commands.cli import main as cli_main
from st_contrastive.data.label_studio import read_label_studio_export
from st_contrastive.scale.round_training import RoundModel

GOLD = {text: label for label, texts in SUPPORT.items() for text in texts}
GIVEN = {text: label for label, texts in SUPPORT.items() for text in texts[:2]}  # the run's file labels 2 a class
pytestmark = pytest.mark.usefixtures("short_rounds")


def label_queries(run, labels: list[str]) -> dict[str, str]:
    """Fill the pending round's queries file as the labelling page leaves it (``""``: not labelled yet); the labels
    given, by text."""
    rows = queries(run, 1)
    for row, label in zip(rows, labels, strict=True):
        row |= {"label": label, "labelled_by": "ana" if label else "", "labelled_at": "2026-03-01T10:00:00.000+00:00"}
    with open(f"{run}/{ARM}/queries-round-001.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return {row["text"]: row["label"] for row in rows if row["label"]}


def test_a_run_exports_its_standing_labels_and_its_models_guesses(human_run, tmp_path):
    run = copy_of_run(human_run, tmp_path)
    first, ignored, _ = (row["text"] for row in queries(run, 1))
    labelled = label_queries(run, [GOLD[first], IGNORED, ""])  # the round being labelled: 1 label, 1 set aside
    cli_main(["label-studio-export", run, "--output", str(tmp_path / "plain.json")])
    assert not any(task.get("predictions") for task in json.loads((tmp_path / "plain.json").read_text()))
    export = ["label-studio-export", run, "--output", str(tmp_path / "export" / "tasks.json"), "--from-name", "topic"]
    cli_main([*export, "--predictions"])  # for a project without the backend

    tasks = json.loads((tmp_path / "export" / "tasks.json").read_text())
    state = ArmState.load(f"{run}/{ARM}")
    texts = [task["data"]["text"] for task in tasks]
    assert [task["data"]["row"] for task in tasks] == list(range(18)) and sorted(texts) == sorted(GOLD)
    annotated = {task["data"]["text"]: task["annotations"] for task in tasks if "annotations" in task}
    assert {text: a[0]["result"][0]["value"]["choices"][0] for text, a in annotated.items()} == GIVEN | {
        first: GOLD[first]
    }
    assert labelled == {first: GOLD[first], ignored: IGNORED} and ignored not in annotated  # no label in Label Studio
    assert {item["from_name"] for a in annotated.values() for item in a[0]["result"]} == {"topic"}
    assert read_label_studio_export(tmp_path / "export" / "tasks.json").labels == [
        GIVEN.get(text) or (GOLD[first] if text == first else None) for text in texts
    ]

    # Every row's prediction is the latest round model's label for it, with its probability as the score.
    probabilities = RoundModel.load(f"{run}/{ARM}/model").proba(texts)
    assert len(state.rounds) == 1 and all(len(task["predictions"]) == 1 for task in tasks)
    assert {p["model_version"] for task in tasks for p in task["predictions"]} == {"round-1"}
    guessed = [
        (task["predictions"][0]["result"][0]["value"]["choices"][0], task["predictions"][0]["score"]) for task in tasks
    ]
    assert guessed == [
        (sorted(SUPPORT)[int(p.argmax())], pytest.approx(float(p.max()), abs=1e-4)) for p in probabilities
    ]

    interface = (tmp_path / "export" / "tasks.label-config.xml").read_text()
    assert '<Choices name="topic" toName="text"' in interface and all(f'"{label}"' in interface for label in SUPPORT)


def test_the_command_refuses_bad_options_by_name_before_loading(human_run, tmp_path, capsys):
    with pytest.raises(SystemExit) as refused:
        cli_main(["label-studio-export", str(tmp_path), "--output", str(tmp_path / "tasks.csv"), "--to-name", " "])
    assert refused.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(": error: ")[1].split(" ")[0] for line in lines] == ["RUN_DIR", "--output", "--to-name"]
    assert "has no config.json" in lines[0] and "name a .json file" in lines[1]
    with pytest.raises(SystemExit) as missing:
        cli_main(["label-studio-export", human_run])
    assert missing.value.code == 2 and "--output" in capsys.readouterr().err


def test_a_label_studio_export_starts_a_run_with_its_annotations_as_labels(tmp_path, base_model):
    texts = [text for label in sorted(SUPPORT) for text in SUPPORT[label]]
    skipped = {"id": 1, "result": [], "was_cancelled": True, "updated_at": "2026-03-02T09:00:00.000000Z"}
    tasks = []
    for number, text in enumerate(texts):
        annotations = [skipped] if number % 6 == 5 else []  # a skip alone leaves the task in the pool
        if text in GIVEN:
            choice = {"from_name": "label", "to_name": "text", "type": "choices", "value": {"choices": [GIVEN[text]]}}
            annotations = [{"id": 2, "result": [choice], "was_cancelled": False, "updated_at": "2026-03-01T09:00:00Z"}]
        tasks.append({"id": 100 + number, "data": {"text": text}, "annotations": annotations, "predictions": []})
    (tmp_path / "project.json").write_text(json.dumps(tasks, indent=1))

    cli_main(human_run_command(tmp_path / "project.json", base_model, tmp_path / "run"))
    state = ArmState.load(tmp_path / "run" / ARM)
    given = {i for i, text in enumerate(texts) if text in GIVEN}
    assert len(given) == 6 and state.rounds[0]["labelled"] == 6 and set(state.labelled) == given
    assert {texts[i]: sorted(SUPPORT)[label] for i, label in state.labelled.items()} == GIVEN
    assert len(state.pending.ids) == 3 and not set(state.pending.ids) & given  # queried from the unannotated tasks
