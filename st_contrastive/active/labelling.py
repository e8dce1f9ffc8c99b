"""A person labelling an active-learning run (``--oracle human``) one text at a time: the logic behind the labelling
page, over the run's own files. No HTTP here (``labelling_app`` serves it) and nothing the loop must know of.

The round's queue is the loop's own ``queries-round-NNN.csv``: each accepted label is written into it at once
(atomically, with who gave it and when), so the file the CSV oracle reads is always the page's state, a killed
server loses at most the label in flight, and a restarted one shows the same position. Skip moves a row to the end
of the file; undo clears the label given last. When every queried row has a label, the next round trains in a
background thread through :func:`~st_contrastive.active.loop.run_active_learning`, the call the command line makes:
it reads the file, trains, acquires and writes the next round's file.
"""

from __future__ import annotations

import getpass
import json
import logging
import os
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from st_contrastive.active import run_lock
from st_contrastive.active.dataset_fingerprint import check_unchanged
from st_contrastive.active.loop import arm_name, experiment_data, given_labels, round_sizes
from st_contrastive.active.oracle import QUERY_COLUMNS, AwaitingLabels, queries_path, write_queries
from st_contrastive.active.state import ArmState
from st_contrastive.config.active_learning import ActiveLearningConfig
from st_contrastive.data.table_file import read_rows, write_csv_atomically

logger = logging.getLogger(__name__)

# The queries file's columns once the page has written it: the loop's four, then who labelled each row and when.
COLUMNS = (*QUERY_COLUMNS, "labelled_by", "labelled_at")
EXPORT_COLUMNS = ("id", "text", "label", "round", "labelled_by", "labelled_at")
# Every label, undo and skip given on the page, appended as it happens: who, when, what.
HISTORY = "labelling-history.jsonl"


def labels_from_history(run_dir: str | Path) -> dict[tuple[int, int], str]:
    """The labels the page's history leaves standing, by (round, row id): each label, less those undone after it.
    The queries files hold the same; this rebuilds them when a file was lost or edited by hand."""
    labels: dict[tuple[int, int], str] = {}
    path = Path(run_dir) / HISTORY
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    for entry in map(json.loads, filter(None, lines)):
        key = (entry["round"], entry["id"])
        if entry["action"] == "label":
            labels[key] = entry["label"]
        elif entry["action"] == "undo":
            labels.pop(key, None)
    return labels


class Refused(ValueError):
    """A request the run's state does not allow; ``conflict``: it was valid once (a stale round, a label given
    already), so the page should reload rather than show an input error."""

    def __init__(self, message: str, conflict: bool = False) -> None:
        super().__init__(message)
        self.conflict = conflict


class LabellingSession:
    """The labelling state of the run in ``run_dir`` (made by ``st-contrastive active --oracle human``), for
    ``annotator``. Thread-safe: the page's requests and the background training share one lock."""

    def __init__(self, run_dir: str | Path, annotator: str | None = None) -> None:
        self.run_dir = Path(run_dir)
        path = self.run_dir / "config.json"
        if not path.is_file():
            raise ValueError(
                f"{run_dir}: no config.json (not a run folder); start one with `st-contrastive active "
                f"--dataset FILE --oracle human --output {run_dir}`"
            )
        self.config = ActiveLearningConfig.from_json(json.loads(path.read_text()))
        if self.config.oracle != "human":
            raise ValueError(
                f"{run_dir} is a run with --oracle {self.config.oracle}: the page labels runs started "
                "with --oracle human"
            )
        self.config.output = str(self.run_dir)  # the folder as given here, wherever the run was started from
        run_lock.acquire(self.run_dir)  # one writer: a second server, or the command line, is refused by name
        self.annotator = annotator or getpass.getuser()
        data = experiment_data(self.config)
        check_unchanged(self.run_dir, self.config.dataset, data.train_texts)  # the labels are row ids of this file
        self.data = data.subset_pool(self.config.pool_size, 0)
        self.label_names = self.data.label_names
        self.given = given_labels(self.config, self.data)
        self.sizes = round_sizes(len(self.data.train_texts) - len(self.given), self.config, len(self.given))
        self.folder = (
            self.run_dir / "arms" / arm_name(self.config.objectives[0], self.config.acquisitions[0], self.config.seed)
        )
        self.lock = threading.RLock()
        self.phase, self.error = "labelling", None
        self.training_started: float | None = None
        self.training_thread: threading.Thread | None = None
        self.predictions: dict[int, dict[int, tuple[str, float]]] = {}  # round -> row id -> (label, probability)
        state = ArmState.load(self.folder)
        if state is None or (state.pending and self._complete(self._rows(state))) or self._interrupted(state):
            # A new run (round 0's queries), a round labelled before a stop, or a round whose training was stopped:
            # the loop goes on from the run's files, as `active --resume-from-checkpoint` does.
            self.train_next_round()
        elif state.pending:
            self._predictions(state)

    def _interrupted(self, state: ArmState) -> bool:
        """The loop took a round's labels and was stopped before it asked for the next ones (a kill or an error
        while training, evaluating or acquiring): no round waits, and the budget is not reached."""
        return state.pending is None and len(state.rounds) < len(self.sizes)

    # What the page shows.

    def status(self) -> dict:
        """Everything the page shows: the phase, the text to label with the model's guess, progress and the curve."""
        with self.lock:
            state = ArmState.load(self.folder)
            rows = self._rows(state) if state and state.pending else []
            labelled = [row for row in rows if row["label"]]
            done = bool(state) and state.pending is None and len(state.rounds) == len(self.sizes)
            status = {
                "run": str(self.run_dir),
                "annotator": self.annotator,
                "labels": self.label_names,
                "phase": "done" if done and self.phase == "labelling" else self.phase,
                "error": self.error,
                "round": state.pending.round if state and state.pending else None,
                "rounds_done": len(state.rounds) if state else 0,
                "rounds_total": len(self.sizes),
                "queried": len(rows),
                "labelled_this_round": len(labelled),
                "labels_so_far": (len(state.labelled) if state else 0) + len(labelled),
                "labels_budget": self.sizes[-1],
                "given": len(self.given),
                "item": self._item(state, rows),
                "can_undo": bool(labelled),
                "curve": [
                    {"round": r["round"], "labelled": r["labelled"], "accuracy": r.get("accuracy")}
                    for r in (state.rounds if state else [])
                ],
            }
            if self.phase == "training":
                previous = state.rounds[-1]["train_seconds"] if state and state.rounds else None
                status["training"] = {
                    "round": len(state.rounds) if state else 0,
                    "expected_seconds": previous,
                    "elapsed_seconds": round(time.monotonic() - self.training_started, 1),
                }
            if status["phase"] == "done":
                status["commands"] = self.commands()
            return status

    def _item(self, state: ArmState | None, rows: list[dict]) -> dict | None:
        """The first row of the queue without a label, with the current model's prediction for it."""
        waiting = [row for row in rows if not row["label"]]
        if not waiting or self.phase != "labelling":
            return None
        row = waiting[0]
        row_id = int(row["id"])
        guess = self._predictions(state).get(row_id)
        return {
            "id": row_id,
            "text": self.data.train_texts[row_id],  # the dataset's, not the file's (escaped for spreadsheets)
            "position": len(rows) - len(waiting) + 1,
            "prediction": guess[0] if guess else None,
            "confidence": guess[1] if guess else None,
        }

    def _predictions(self, state: ArmState) -> dict[int, tuple[str, float]]:
        """The last round's model on this round's queries (none before a model exists: round 0's random rows)."""
        round_number = state.pending.round
        if round_number not in self.predictions:
            model_dir = self.folder / "model"
            self.predictions[round_number] = (
                predict(model_dir, self.data.train_texts, state.pending.ids)
                if state.rounds and model_dir.is_dir()
                else {}
            )
        return self.predictions[round_number]

    # What the person does.

    def label(self, round_number: int, row_id: int, label: str) -> dict:
        """Give ``row_id`` of ``round_number`` the label ``label`` (a label name); the same label again is a no-op."""
        with self.lock:
            state, rows, row = self._queried(round_number, row_id)
            if label not in self.label_names:
                raise Refused(f"unknown label {label!r}; expected one of {self.label_names}")
            if row["label"]:
                if row["label"] == label:
                    return self.status()  # a double click or a second tab: applied once
                raise Refused(f"row {row_id} is labelled {row['label']!r} already; undo it first", conflict=True)
            row |= {
                "label": label,
                "labelled_by": self.annotator,
                "labelled_at": datetime.now(UTC).isoformat(timespec="milliseconds"),
            }
            self._write(state, rows)
            self._record("label", round_number, row_id, label, row["labelled_at"])
            if self._complete(rows):
                self.train_next_round()
            return self.status()

    def undo(self, round_number: int) -> dict:
        """Clear the label given last in this round: that row is the next to label again."""
        with self.lock:
            state, rows = self._round(round_number)
            labelled = [row for row in rows if row["label"]]
            if not labelled:
                raise Refused(f"nothing labelled in round {round_number} to undo", conflict=True)
            # ISO times sort as text; of two labels in one millisecond, the later row in the file came later
            last = max(labelled, key=lambda row: (row["labelled_at"], rows.index(row)))
            rows.remove(last)
            rows.insert(
                next((i for i, row in enumerate(rows) if not row["label"]), len(rows)),
                last | {"label": "", "labelled_by": "", "labelled_at": ""},
            )
            self._write(state, rows)
            self._record("undo", round_number, int(last["id"]), last["label"])
            return self.status()

    def skip(self, round_number: int, row_id: int) -> dict:
        """Put ``row_id`` at the end of the queue; the round trains once every row, skipped ones too, has a label."""
        with self.lock:
            state, rows, row = self._queried(round_number, row_id)
            if row["label"]:
                raise Refused(f"row {row_id} is labelled already", conflict=True)
            rows.remove(row)
            rows.append(row)
            self._write(state, rows)
            self._record("skip", round_number, row_id)
            return self.status()

    def _record(self, action: str, round_number: int, row_id: int, label: str = "", when: str | None = None) -> None:
        """Append the action to the run's history (one JSON line each, synced before the request is answered)."""
        entry = {
            "action": action,
            "round": round_number,
            "id": row_id,
            "label": label,
            "who": self.annotator,
            "when": when or datetime.now(UTC).isoformat(timespec="milliseconds"),
        }
        with (self.run_dir / HISTORY).open("a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")
            f.flush()
            os.fsync(f.fileno())

    # The next round, in the background.

    def retry(self) -> dict:
        """Train the round again after a failure (its labels are in the queries file): the page's retry button."""
        with self.lock:
            if self.phase != "failed":
                raise Refused("nothing failed: no round to retry", conflict=True)
            self.train_next_round()
            return self.status()

    def train_next_round(self) -> None:
        """Run the loop until it waits for labels again or reaches the budget, in a background thread."""
        with self.lock:
            if self.phase == "training":
                return
            self.phase, self.error, self.training_started = "training", None, time.monotonic()
            self.training_thread = threading.Thread(target=self._train, name="active-learning-round", daemon=True)
            self.training_thread.start()

    def _train(self) -> None:
        from st_contrastive.active.loop import run_active_learning
        from st_contrastive.active.report import write_reports

        try:
            rows = run_active_learning(self.config, progress=False)
            write_reports(self.run_dir, rows, title=f"{self.config.dataset}: active learning")
            phase = "labelling"  # status() shows "done": no round waits for labels
        except AwaitingLabels as waiting:
            logger.info("round ready: %s", waiting)
            self._predictions(ArmState.load(self.folder))  # here, not in the first request of the round
            phase = "labelling"
        except Exception as error:  # shown on the page; the labels are in the queries file, nothing is lost
            logger.exception("training the next round failed")
            phase, self.error = "failed", f"{type(error).__name__}: {error}"
        with self.lock:
            self.phase = phase

    def wait(self, timeout: float | None = None) -> None:
        """Until the background training (if any) has finished: for scripts and tests."""
        thread = self.training_thread
        if thread is not None:
            thread.join(timeout)

    # At the budget.

    def export(self) -> Path:
        """Every label of the run as ``labelled.csv`` in the run folder (id, text, label, round, labelled_by,
        labelled_at): the file's own labels first, then each round's queries in the order they were labelled."""
        with self.lock:
            rows = [
                {
                    "id": i,
                    "text": self.data.train_texts[i],
                    "label": self.label_names[label],
                    "round": 0,
                    "labelled_by": "the dataset file",
                    "labelled_at": "",
                }
                for i, label in self.given.items()
            ]
            for round_number in range(len(self.sizes)):
                path = queries_path(self.folder, round_number)
                if path.is_file():
                    answered = [
                        row | {"text": self.data.train_texts[int(row["id"])]} for row in read_rows(path) if row["label"]
                    ]
                    rows += sorted(answered, key=lambda row: row.get("labelled_at") or "")
            path = self.run_dir / "labelled.csv"
            write_csv_atomically(path, EXPORT_COLUMNS, rows)
            return path

    def commands(self) -> list[str]:
        """What to run with the finished model: its encoder on STS and transfer tasks (the classifier's accuracy is
        in ``results.json`` when the data has a test split), and publishing it with its card."""
        model = self.folder / "model"
        return [f"st-contrastive evaluate {model}", f"st-contrastive push {model} --repo-id USER/NAME"]

    # The queries file.

    def _round(self, round_number: int) -> tuple[ArmState, list[dict]]:
        if self.phase == "training":
            raise Refused("the next round is training; its queries come when it is done", conflict=True)
        state = ArmState.load(self.folder)
        if state is None or state.pending is None:
            raise Refused("no round waits for labels (the budget is reached)", conflict=True)
        if round_number != state.pending.round:
            raise Refused(
                f"round {round_number} is over; the run waits for the labels of round {state.pending.round}",
                conflict=True,
            )
        return state, self._rows(state)

    def _queried(self, round_number: int, row_id: int) -> tuple[ArmState, list[dict], dict]:
        state, rows = self._round(round_number)
        row = next((row for row in rows if int(row["id"]) == row_id), None)
        if row is None:
            raise Refused(f"row {row_id} was not queried in round {round_number}")
        return state, rows, row

    def _rows(self, state: ArmState) -> list[dict]:
        """The rows of the pending round's queries file (written first if the run stopped before writing it)."""
        path = queries_path(self.folder, state.pending.round)
        if not path.is_file():
            write_queries(path, state.pending, self.data.train_texts)
        return [{column: row.get(column) or "" for column in COLUMNS} for row in read_rows(path)]

    def _write(self, state: ArmState, rows: list[dict]) -> None:
        write_csv_atomically(queries_path(self.folder, state.pending.round), COLUMNS, rows)

    @staticmethod
    def _complete(rows: list[dict]) -> bool:
        return bool(rows) and all(row["label"] for row in rows)


def predict(model_dir: Path, texts: list[str], ids: list[int]) -> dict[int, tuple[str, float]]:
    """The label the saved round model gives each of ``ids``, and its probability."""
    from sentence_transformers import SentenceTransformer

    from st_contrastive.active.objectives import RoundModel
    from st_contrastive.models.heads.label_classifier import LabelClassifier

    model = RoundModel(SentenceTransformer(str(model_dir)), LabelClassifier.load(str(model_dir / "classifier")))
    probabilities = model.proba([texts[i] for i in ids])
    labels = model.classifier.labels
    return {i: (labels[int(p.argmax())], round(float(p.max()), 3)) for i, p in zip(ids, probabilities, strict=True)}
