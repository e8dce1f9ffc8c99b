"""SCALe inside the real Label Studio (1.23.2, its own venv: make label-studio-venv), as a person meets it: a
human-oracle run on TREC questions with a tiny model, its tasks exported with `st-contrastive label-studio-export`,
a text-classification project made and filled through label-studio-sdk, `st-contrastive label-studio-backend` as the
project's model (and its prelabelling model), then: predictions on every task, the pending round's queries first
when the Data Manager sorts by "Prediction score" and in "Label All Tasks" with the current round's label, labels
given in Label Studio training the next round and moving the model version, the backend killed (SIGKILL) while a
round trains, restarted on the same folder, finishing the round with no label lost; and Label Studio's own JSON
export read as a dataset that starts a run. Label Studio's settings for this are in tests/label_studio_server.py.

Slow (a minute or two, Label Studio's first start migrating its database): run on demand,

    make test-label-studio        (or: .venv/bin/pytest -n0 -m slow tests/active/test_label_studio.py -s)

which prints the time of each step.
"""

import csv
import json
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from label_studio_server import VENV, Backend, LabelStudio, wait_until
from support_tickets import ARM, human_run_command, short_rounds
from trec_questions import CLASSES, write_trec_questions

from st_contrastive.active import ArmState
from st_contrastive.active.labelling import HISTORY
from st_contrastive.commands.cli import main as cli_main
from st_contrastive.data.label_studio import FROM_NAME, TO_NAME, read_label_studio_export

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (VENV / "bin" / "label-studio").exists(), reason="no .venv-label-studio: make label-studio-venv"
    ),
]

BY_SCORE = ["tasks:predictions_score"]  # the Data Manager sorted by "Prediction score", ascending


class Steps:
    """Each step's wall time, printed at the end (``-s`` shows them)."""

    def __init__(self) -> None:
        self.times: list[tuple[str, float]] = []

    @contextmanager
    def __call__(self, name: str):
        start = time.monotonic()
        yield
        self.times.append((name, time.monotonic() - start))

    def table(self) -> str:
        width = max(len(name) for name, _ in self.times)
        return "\n".join(f"{name:<{width}}  {seconds:6.1f} s" for name, seconds in self.times)


def queried(run_dir: str, round_number: int) -> list[int]:
    """The rows a round queried, in the order SCALe acquired them (its queries file, as written)."""
    with open(f"{run_dir}/{ARM}/queries-round-{round_number:03d}.csv", newline="") as f:
        return [int(row["id"]) for row in csv.DictReader(f)]


def labels_in(run_dir: str, round_number: int) -> dict[int, str]:
    with open(f"{run_dir}/{ARM}/queries-round-{round_number:03d}.csv", newline="") as f:
        return {int(row["id"]): row["label"] for row in csv.DictReader(f) if row["label"]}


def check_predictions(studio: LabelStudio, project: int, view: int, version: str, first: list[int]) -> None:
    """Every task has a prediction of ``version`` with one of the run's labels; the tasks sorted by Prediction score
    begin with the rows ``first``, in that order (the pending round's queries, as SCALe acquired them); and "Label
    All Tasks" in the tab sorted so (``view``) opens the first task without a label, with ``version``'s label chosen
    in advance."""
    tasks = studio.sdk("tasks", project=project, ordering=BY_SCORE)
    for task in tasks:
        latest = [p for p in task["predictions"] if p["model_version"] == version]
        assert len(latest) == 1, (task["id"], task["predictions"])
        assert latest[0]["choices"][0] in CLASSES and task["score"] == pytest.approx(latest[0]["score"])
    assert [task["row"] for task in tasks[: len(first)]] == first, (
        f"sorted by Prediction score, the tasks (row, score) begin {[(t['row'], t['score']) for t in tasks[:6]]}, "
        f"not with the pending round's queries {first}"
    )
    assert all(task["score"] < 0.5 for task in tasks[: len(first)])
    assert all(task["score"] >= 0.5 for task in tasks[len(first) :])
    opened = studio.sdk("next-task", project=project, view=view)
    unlabelled = [task["row"] for task in tasks if not task["annotations"]]
    assert opened["row"] == unlabelled[0] and [p["model_version"] for p in opened["predictions"]] == [version]


def test_scale_labels_in_label_studio_trains_rounds_and_survives_a_kill(tmp_path, tiny_mlm_dir):
    from conftest import sentence_model

    steps = Steps()
    studio = LabelStudio(tmp_path / "label-studio")  # migrates its fresh database while the run starts
    backend = None
    try:
        with steps("the run: round 0 trains on 6 labels and queries round 1 (in-process)"):
            gold = write_trec_questions(tmp_path / "questions.csv", per_class=6, labelled_per_class=2, test_per_class=2)
            sentence_model(tiny_mlm_dir).save(str(tmp_path / "base"))
            run = str(tmp_path / "run")
            with short_rounds():
                cli_main(human_run_command(tmp_path / "questions.csv", tmp_path / "base", run))
        with steps("st-contrastive label-studio-export"):
            cli_main(["label-studio-export", run, "--output", str(tmp_path / "tasks.json")])
        tasks_file = json.loads((tmp_path / "tasks.json").read_text())
        assert sorted(task["data"]["row"] for task in tasks_file) == list(range(18))
        interface = (tmp_path / "tasks.label-config.xml").read_text()
        with steps("Label Studio answers (a fresh SQLite database: every migration)"):
            studio.wait()
        with steps("project created, tasks imported (SDK)"):
            project = studio.sdk(
                "create-project",
                title="TREC questions",
                label_config=interface,
                tasks_file=str(tmp_path / "tasks.json"),
            )["project"]
        listed = studio.sdk("tasks", project=project)
        assert len(listed) == 18
        task_of = {task["row"]: task["id"] for task in listed}
        text_of = {task["row"]: task["text"] for task in listed}

        backend = Backend(run, tmp_path / "backend.log")
        with steps("backend started"):
            url = backend.start()
        with steps("model connected (Settings > Model > Connect Model)"):
            model = studio.sdk("connect-model", project=project, url=url)
        assert (model["state"], model["model_version"]) == ("CO", "round-1"), model
        assert model["webhooks"] == [f"{url}/webhook"]  # Label Studio's own, to the backend: how labels reach it
        studio.sdk("prelabel-with-model", project=project)

        view = studio.sdk(
            "create-view", project=project, title="SCALe's order", ordering=BY_SCORE, hidden=[], widths={}
        )["id"]

        def annotate(rows: list[int]) -> None:
            """A person's labels for ``rows``, submitted in Label Studio (the SDK's annotations)."""
            labels = {task_of[row]: gold[text_of[row]] for row in rows}
            studio.sdk("annotate", labels=labels, from_name=FROM_NAME, to_name=TO_NAME)

        with steps("predictions retrieved (round-1)"):
            studio.sdk("retrieve-predictions", project=project)
        check_predictions(studio, project, view, "round-1", queried(run, 1))

        with steps("round 1's 3 queries labelled in Label Studio (SDK annotations)"):
            round_one = queried(run, 1)
            annotate(round_one)
        # Each label reaches the round's queries file through Label Studio's webhook.
        wait_until(lambda: labels_in(run, 1) == {row: gold[text_of[row]] for row in round_one}, 60, "round 1's labels")
        with steps("round 1 trains; the model version moves to round-2"):
            studio.sdk("wait-model-version", project=project, version="round-2", timeout=600)
        with steps("predictions retrieved (round-2)"):
            studio.sdk("retrieve-predictions", project=project)
        check_predictions(studio, project, view, "round-2", queried(run, 2))

        # Round 2 labelled with the backend held in the round's training, where it is killed.
        backend.kill()
        marker = tmp_path / "training"
        with steps("backend restarted (held at its next round's training)"):
            assert backend.start(fault="pause-training", marker=marker) == url  # the token is the run folder's
        with steps("round 2's 3 queries labelled; the backend killed (SIGKILL) while round 2 trains"):
            round_two = queried(run, 2)
            annotate(round_two)
            wait_until(marker.exists, 120, "round 2's training")
            backend.kill()
        assert ArmState.load(f"{run}/{ARM}").phase == "training"
        assert labels_in(run, 2) == {row: gold[text_of[row]] for row in round_two}
        with steps("backend restarted on the same folder; round 2 finishes (round-3)"):
            backend.start()
            studio.sdk("wait-model-version", project=project, version="round-3", timeout=600)
        with steps("predictions retrieved (round-3)"):
            studio.sdk("retrieve-predictions", project=project)
        check_predictions(studio, project, view, "round-3", [])

        # No label lost or doubled: the run trained on the file's 6 and Label Studio's 6, each given once.
        state = ArmState.load(f"{run}/{ARM}")
        assert state.phase == "done" and [r["labelled"] for r in state.rounds] == [6, 9, 12]
        given = {row: gold[text_of[row]] for row in round_one + round_two}
        assert {row: CLASSES[label] for row, label in state.labelled.items() if row in given} == given
        history = [json.loads(line) for line in (Path(run) / HISTORY).read_text().splitlines()]
        assert sorted((entry["action"], entry["id"]) for entry in history) == sorted(("label", row) for row in given)

        # Label Studio's own export starts a run: its 12 labelled tasks are round 0's labels, the other 6 the pool.
        with steps("Label Studio's JSON export"):
            studio.sdk("export", project=project, output=str(tmp_path / "export.json"))
        export = read_label_studio_export(tmp_path / "export.json")
        by_row = {task["data"]["row"]: task for task in json.loads((tmp_path / "export.json").read_text())}
        labelled = {by_row[row]["id"]: CLASSES[label] for row, label in state.labelled.items()}
        assert dict(zip(export.task_ids, export.labels, strict=True)) == {
            task["id"]: labelled.get(task["id"]) for task in by_row.values()
        }
        with steps("a run started from Label Studio's export (in-process)"), short_rounds():
            cli_main(human_run_command(tmp_path / "export.json", tmp_path / "base", str(tmp_path / "again")))
        assert ArmState.load(f"{tmp_path}/again/{ARM}").rounds[0]["labelled"] == 12
    finally:
        if backend:
            backend.kill()
        studio.stop()
        if steps.times:
            print("\nSCALe in Label Studio, step by step:\n" + steps.table())
