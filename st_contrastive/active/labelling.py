"""People labelling an active-learning run (``--oracle human``) one text at a time: the logic behind the labelling
page, over the run's own files. No HTTP here (``labelling_app`` serves it) and nothing the loop must know of.

The round's queue is the loop's own ``queries-round-NNN.csv``: each accepted label is written into it at once
(atomically, with who gave it and when), so the file the CSV oracle reads is always the page's state, a killed
server loses at most the label in flight, and a restarted one shows the same position. Every label, undo, skip,
ignore and edit is also appended to ``labelling-history.jsonl``, from which :func:`labels_from_history` rebuilds the
standing labels. When every queried row has a label (after ``grace_seconds`` in which the last one can be undone, or
at once with "train now"), the next round trains in a background thread through
:func:`~st_contrastive.active.loop.run_active_learning`, the call the command line makes; a restarted server goes on
from the phase the run's state names. Labels of earlier rounds can be corrected: the next round trains on the
correction. At the budget (and on demand) ``predictions.csv`` gives the model's label for every row, and when the
data has no test split each round gets a cross-validated accuracy estimate on the labels so far.
"""

from __future__ import annotations

import getpass
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from st_contrastive.active import run_lock
from st_contrastive.active.dataset_fingerprint import check_unchanged
from st_contrastive.active.labelling_settings import LabellingSettings
from st_contrastive.active.loop import arm_name, experiment_data, given_labels, round_sizes
from st_contrastive.active.oracle import IGNORED, QUERY_COLUMNS, AwaitingLabels, queries_path, write_queries
from st_contrastive.active.predictions import PREDICTIONS, standing_labels, write_predictions
from st_contrastive.active.settings import ActiveLearningConfig
from st_contrastive.active.state import ArmState
from st_contrastive.atomic_files import write_atomically
from st_contrastive.data.table_file import read_rows, spreadsheet_text, write_csv_atomically

logger = logging.getLogger(__name__)

# The queries file's columns once the page has written it: the loop's four, then who labelled each row and when.
COLUMNS = (*QUERY_COLUMNS, "labelled_by", "labelled_at")
EXPORT_COLUMNS = ("id", "text", "label", "round", "labelled_by", "labelled_at")
# Every label, undo, skip, ignore and edit given on the page, appended as it happens: who, when, what.
HISTORY = "labelling-history.jsonl"
# Each round's cross-validated accuracy estimate (data without a test split), by round.
ESTIMATES = "accuracy-estimates.json"
# A text shown to one person is not shown to another for this long, so two people label different rows.
SHOWN_SECONDS = 120


def labels_from_history(run_dir: str | Path) -> dict[int, str]:
    """The labels the page's history leaves standing, by row id (``(ignored)`` for an ignored row): each label,
    ignore or edit, less those undone after it. The queries files hold the same; this rebuilds them when a file was
    lost or edited by hand."""
    labels: dict[int, str] = {}
    path = Path(run_dir) / HISTORY
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    for entry in map(json.loads, filter(None, lines)):
        if entry["action"] in ("label", "ignore", "edit"):
            labels[entry["id"]] = entry["label"]
        elif entry["action"] == "undo":
            labels.pop(entry["id"], None)
    return labels


def now() -> str:
    """A time for the files: ISO 8601 in UTC, to the millisecond (sorts as text)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class Refused(ValueError):
    """A request the run's state does not allow; ``conflict``: it was valid once (a stale round, a label given
    already), so the page should reload rather than show an input error."""

    def __init__(self, message: str, conflict: bool = False) -> None:
        super().__init__(message)
        self.conflict = conflict


class LabellingSession:
    """The labelling state of the run in ``run_dir`` (made by ``st-contrastive active --oracle human``). Each action
    takes ``who`` did it (default ``annotator``, the login name). Thread-safe: the page's requests and the
    background work share one lock."""

    def __init__(
        self, run_dir: str | Path, annotator: str | None = None, settings: LabellingSettings | None = None
    ) -> None:
        self.run_dir = Path(run_dir)
        path = self.run_dir / "config.json"
        if not path.is_file():
            raise ValueError(
                f"{run_dir}: no config.json (not the folder of an active-learning run); start one with "
                "oracle='human' in this folder"
            )
        self.config = ActiveLearningConfig.from_json(json.loads(path.read_text()))
        if self.config.oracle != "human":
            raise ValueError(
                f"{run_dir} is a run with oracle={self.config.oracle!r}: the page labels runs started with "
                "oracle='human'"
            )
        self.config.output = str(self.run_dir)  # the folder as given here, wherever the run was started from
        self.settings = settings or LabellingSettings()
        run_lock.acquire(self.run_dir)  # one writer: a second server, or the command line, is refused by name
        self.annotator = annotator or getpass.getuser()
        data = experiment_data(self.config)
        check_unchanged(self.run_dir, self.config.dataset, data.train_texts)  # the labels are row ids of this file
        self.data = data.subset_pool(self.config.pool_size, self.config.seed)  # the pool the loop draws
        self.label_names = self.data.label_names
        self.given = given_labels(self.config, self.data)
        self.sizes = round_sizes(len(self.data.train_texts) - len(self.given), self.config, len(self.given))
        self.folder = (
            self.run_dir / "arms" / arm_name(self.config.objectives[0], self.config.acquisitions[0], self.config.seed)
        )
        self.lock = threading.RLock()
        self.phase, self.error = "labelling", None
        self.started: float | None = None  # when the background work began
        self.train_at: float | None = None  # when a labelled round trains (after the grace period)
        self.timer: threading.Timer | None = None
        self.worker: threading.Thread | None = None
        self.estimating = False
        self.shown: dict[int, tuple[str, float]] = {}  # row id -> (who was shown it, when)
        self.predictions: dict[int, dict[int, tuple[str, float]]] = {}  # round -> row id -> (label, probability)
        # Called (under the lock) when a trained round's queries wait for labels: labels given elsewhere before a
        # round queried their rows (Label Studio's backend) are applied then.
        self.on_round_ready: list[Callable[[], None]] = []
        state = ArmState.load(self.folder)
        if state is not None and state.phase != "training":
            self._apply_corrections(state)  # corrections given while a round trained, before a stop
        if state is None or state.phase in ("training", "evaluating", "acquiring"):
            # A new run (round 0's queries), or one stopped after a round's labels were taken (while it trained,
            # evaluated or acquired): the loop goes on from the phase the state names.
            self._start(self._train)
        elif state.pending and self._complete(self._rows(state)):
            self._start(self._train)  # labelled before a stop: no grace period, the labels were given long ago
        else:
            self._start(self._estimate)  # a stop may have cut the last round's estimate short

    # What the page shows.

    def status(self, who: str | None = None, *, show_item: bool = True) -> dict:
        """Everything the page shows ``who``: the phase, their text to label with the model's guess (unless
        ``show_item`` is false: a page that has not said who is looking), progress, the curve (test accuracy, or the
        cross-validated estimate) and what the last label of a round waits for."""
        who = who or self.annotator
        with self.lock:
            state = ArmState.load(self.folder)
            rows = self._rows(state) if state and state.pending else []
            labelled = [row for row in rows if row["label"]]
            done = bool(state) and state.phase == "done"
            estimates = self._estimates()
            status = {
                "run": str(self.run_dir),
                "annotator": who,
                "labels": self.label_names,
                "ignored_label": IGNORED,
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
                "item": self._item(state, rows, who) if show_item else None,
                "can_undo": any(row["labelled_by"] == who for row in labelled) and self.phase != "training",
                "has_test_split": bool(self.data.test_texts),
                "estimating": self.estimating,
                "predictions": (self.run_dir / PREDICTIONS).is_file(),
                "curve": [
                    {
                        "round": r["round"],
                        "labelled": r["labelled"],
                        "accuracy": r.get("accuracy"),
                        "estimate": estimates.get(str(r["round"])),
                    }
                    for r in (state.rounds if state else [])
                ],
            }
            if self.phase == "scheduled":
                status["train_in_seconds"] = max(0.0, round(self.train_at - time.monotonic(), 1))
            if self.phase == "training":
                previous = state.rounds[-1]["train_seconds"] if state and state.rounds else None
                status["training"] = {
                    "round": len(state.rounds) if state else 0,
                    # training, evaluating or acquiring; or still estimating the last round's accuracy
                    "step": "estimating" if self.estimating else (state.phase if state else "training"),
                    "expected_seconds": previous,
                    "elapsed_seconds": round(time.monotonic() - self.started, 1),
                }
            if status["phase"] == "done":
                status["commands"] = self.commands()
            return status

    def _item(self, state: ArmState | None, rows: list[dict], who: str) -> dict | None:
        """The first row of the queue without a label that nobody else is looking at, with the current model's
        prediction for it (when everyone else holds one, the first row without a label)."""
        waiting = [row for row in rows if not row["label"]]
        if not waiting or self.phase != "labelling":
            return None
        clock = time.monotonic()

        def free(row: dict) -> bool:
            holder, since = self.shown.get(int(row["id"]), (who, 0.0))
            return holder == who or clock - since > SHOWN_SECONDS

        row = next(filter(free, waiting), waiting[0])
        row_id = int(row["id"])
        self.shown[row_id] = (who, clock)
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

    def review(self) -> list[dict]:
        """Every label given so far, the newest first: each round's labelled and ignored rows (editable), then the
        rows your file labelled (edit the file for those)."""
        with self.lock:
            from_file, from_rounds = self._labelled_rows()
            shown = [
                {k: row[k] for k in ("id", "text", "label", "round")}
                | {"who": row["labelled_by"], "when": row["labelled_at"], "editable": editable}
                for rows, editable in ((from_rounds, True), (from_file, False))
                for row in rows
            ]
            newest_first = sorted(shown[: len(from_rounds)], key=lambda row: (row["when"], row["round"]), reverse=True)
            return newest_first + shown[len(from_rounds) :]

    def _labelled_rows(self) -> tuple[list[dict], list[dict]]:
        """The labels of the dataset file, and those of every round's queries file, as rows of ``EXPORT_COLUMNS``
        (the dataset's own text, not the file's escaped one)."""
        from_file = [
            {
                "id": i,
                "text": self.data.train_texts[i],
                "label": self.label_names[label],
                "round": 0,
                "labelled_by": "your file",
                "labelled_at": "",
            }
            for i, label in self.given.items()
        ]
        from_rounds = []
        for round_number in range(len(self.sizes)):
            path = queries_path(self.folder, round_number)
            if path.is_file():
                from_rounds += [
                    {k: row[k] for k in ("labelled_by", "labelled_at")}
                    | {"id": int(row["id"]), "text": self.data.train_texts[int(row["id"])]}
                    | {"label": row["label"], "round": round_number}
                    for row in self._read(path)
                    if row["label"]
                ]
        return from_file, from_rounds

    # What a person does.

    def label(self, round_number: int, row_id: int, label: str, who: str | None = None) -> dict:
        """Give ``row_id`` of ``round_number`` the label ``label`` (a label name, or ``(ignored)`` for a text that
        fits none); the same label again is a no-op. The round's last label schedules its training."""
        who = who or self.annotator
        with self.lock:
            rows, row = self._queried(round_number, row_id)
            if label not in self.label_names and label != IGNORED:
                raise Refused(f"unknown label {label!r}; expected one of {self.label_names} or {IGNORED}")
            if row["label"]:
                if row["label"] == label:
                    return self.status(who)  # a double click or a second tab: applied once
                raise Refused(f"row {row_id} is labelled {row['label']!r} already; undo it first", conflict=True)
            row |= {"label": label, "labelled_by": who, "labelled_at": now()}
            self._write(queries_path(self.folder, round_number), rows)
            self._record(
                "ignore" if label == IGNORED else "label", round_number, row_id, who, label, row["labelled_at"]
            )
            self.shown.pop(row_id, None)
            if self._complete(rows):
                self._schedule()
            return self.status(who)

    def ignore(self, round_number: int, row_id: int, who: str | None = None) -> dict:
        """Set ``row_id`` aside as fitting no label: never trained on, never asked again."""
        return self.label(round_number, row_id, IGNORED, who)

    def undo(self, round_number: int, who: str | None = None) -> dict:
        """Clear the label ``who`` gave last in this round (also in the grace period after the round's last label):
        that row is the next they label. The answer names the row undone (``undone``)."""
        who = who or self.annotator
        with self.lock:
            rows = self._round(round_number)
            mine = [row for row in rows if row["label"] and row["labelled_by"] == who]
            if not mine:
                raise Refused(f"you ({who}) have no label in round {round_number} to undo", conflict=True)
            if self.phase == "scheduled":
                self._cancel_schedule()
            # ISO times sort as text; of two labels in one millisecond, the later row in the file came later
            last = max(mine, key=lambda row: (row["labelled_at"], rows.index(row)))
            rows.remove(last)
            rows.insert(
                next((i for i, row in enumerate(rows) if not row["label"]), len(rows)),
                last | {"label": "", "labelled_by": "", "labelled_at": ""},
            )
            self._write(queries_path(self.folder, round_number), rows)
            self._record("undo", round_number, int(last["id"]), who, last["label"])
            self.shown[int(last["id"])] = (who, time.monotonic())
            undone = {"id": int(last["id"]), "text": self.data.train_texts[int(last["id"])], "label": last["label"]}
            return self.status(who) | {"undone": undone}

    def clear(self, round_number: int, row_id: int, who: str | None = None) -> dict:
        """Clear the label of ``row_id`` in the round that waits for labels, whoever gave it, and leave the row where
        it is in the queue (also in the grace period, whose training it cancels): a label withdrawn elsewhere, such
        as an annotation deleted in Label Studio. Recorded as an undo."""
        who = who or self.annotator
        with self.lock:
            rows = self._round(round_number)
            row = next((row for row in rows if int(row["id"]) == row_id), None)
            if row is None:
                raise Refused(f"row {row_id} was not queried in round {round_number}")
            if not row["label"]:
                return self.status(who)
            if self.phase == "scheduled":
                self._cancel_schedule()
            label = row["label"]
            row |= {"label": "", "labelled_by": "", "labelled_at": ""}
            self._write(queries_path(self.folder, round_number), rows)
            self._record("undo", round_number, row_id, who, label)
            return self.status(who)

    def skip(self, round_number: int, row_id: int, who: str | None = None) -> dict:
        """Put ``row_id`` at the end of the queue; the round trains once every row, skipped ones too, has a label."""
        who = who or self.annotator
        with self.lock:
            rows, row = self._queried(round_number, row_id)
            if row["label"]:
                raise Refused(f"row {row_id} is labelled already", conflict=True)
            rows.remove(row)
            rows.append(row)
            self._write(queries_path(self.folder, round_number), rows)
            self._record("skip", round_number, row_id, who)
            self.shown.pop(row_id, None)
            return self.status(who)

    def edit(self, row_id: int, label: str, who: str | None = None) -> dict:
        """Correct the label of a row labelled (or ignored) earlier, from the review list. A row of the round being
        labelled changes at once; one of an earlier round changes in its queries file and in what the next round
        trains on (after the round that trains now, if one does). A row cannot be set aside as ignored this way."""
        who = who or self.annotator
        with self.lock:
            if label not in self.label_names:
                raise Refused(f"unknown label {label!r}; expected one of {self.label_names}")
            if row_id in self.given:
                raise Refused(f"row {row_id} is labelled in {self.config.dataset}: change it in that file")
            state = ArmState.load(self.folder)
            round_number, path, rows = self._round_of(state, row_id)
            row = next(row for row in rows if int(row["id"]) == row_id)
            if row["label"] == label:
                return self.status(who)
            row |= {"label": label, "labelled_by": who, "labelled_at": now()}
            self._write(path, rows)
            self._record("edit", round_number, row_id, who, label, row["labelled_at"])
            if self.phase != "training" and (state.pending is None or round_number != state.pending.round):
                self._apply_corrections(state)  # otherwise when the round that trains now is done
            return self.status(who)

    def train_now(self) -> dict:
        """Train the labelled round at once instead of at the end of its grace period: the page's "train now"."""
        with self.lock:
            if self.phase != "scheduled":
                raise Refused("no labelled round waits to train", conflict=True)
            self._cancel_schedule()
            self._start(self._train)
            return self.status()

    def retry(self) -> dict:
        """Train the round again after a failure (its labels are in the queries file): the page's retry button."""
        with self.lock:
            if self.phase != "failed":
                raise Refused("nothing failed: no round to retry", conflict=True)
            self._start(self._train)
            return self.status()

    def write_predictions(self) -> Path:
        """``predictions.csv`` from the latest round's model, now (at the budget the loop writes it itself)."""
        with self.lock:  # the model folder is not swapped while it is read: no round trains
            if self.phase == "training":
                raise Refused("a round is training; predictions come from its model when it is done", conflict=True)
            state = ArmState.load(self.folder)
            if not state or not state.rounds:
                raise Refused("no round has trained yet: label the first round's texts", conflict=True)
            return write_predictions(
                self.run_dir / PREDICTIONS,
                self.folder / "model",
                self.data.train_texts,
                self._standing(state),
                self.config.training.batch_size,
            )

    def prediction_preview(self, limit: int = 20) -> dict:
        """The end page's view of ``predictions.csv``: rows per predicted label, and the ``limit`` rows without a
        label that the model is least sure of (the ones worth a look)."""
        path = self.run_dir / PREDICTIONS
        if not path.is_file():
            raise Refused("no predictions yet: they are written at the budget, or ask for them", conflict=True)
        rows = read_rows(path)
        counts = {name: sum(row["predicted"] == name for row in rows) for name in self.label_names}
        unlabelled = sorted((row for row in rows if not row["label"]), key=lambda row: float(row["probability"]))
        shown = [
            {
                "id": int(row["id"]),
                "text": self.data.train_texts[int(row["id"])],
                "predicted": row["predicted"],
                "probability": float(row["probability"]),
            }
            for row in unlabelled[:limit]
        ]
        return {"rows": len(rows), "unlabelled": len(unlabelled), "per_label": counts, "least_sure": shown}

    def _standing(self, state: ArmState) -> dict[int, str]:
        """Every label given so far by row id: the file's, the finished rounds', and the round being labelled's."""
        labels = {i: self.label_names[label] for i, label in self.given.items()} | standing_labels(
            state, self.label_names
        )
        if state.pending:
            labels |= {int(row["id"]): row["label"] for row in self._rows(state) if row["label"]}
        return labels

    def _record(self, action: str, round_number: int, row_id: int, who: str, label: str = "", when: str = "") -> None:
        """Append the action to the run's history (one JSON line each, synced before the request is answered)."""
        entry = {
            "action": action,
            "round": round_number,
            "id": row_id,
            "label": label,
            "who": who,
            "when": when or now(),
        }
        with (self.run_dir / HISTORY).open("a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def _apply_corrections(self, state: ArmState) -> None:
        """Make the state's labels of finished rounds what the history says (edits; the loop is not running)."""
        changed = False
        for row_id, label in labels_from_history(self.run_dir).items():
            known = row_id in state.labelled or row_id in state.ignored
            if known and label in self.label_names and state.labelled.get(row_id) != self.label_names.index(label):
                state.relabel(row_id, self.label_names.index(label))
                changed = True
        if changed:
            state.save(self.folder)

    # The background work: a round's training (evaluation, acquisition), then the accuracy estimate.

    def _schedule(self) -> None:
        """The round is labelled: it trains after the grace period, unless its last label is undone first."""
        if not self.settings.grace_seconds:
            self._start(self._train)
            return
        self.phase, self.train_at = "scheduled", time.monotonic() + self.settings.grace_seconds
        self.timer = threading.Timer(self.settings.grace_seconds, self._grace_over)
        self.timer.daemon = True
        self.timer.start()

    def _grace_over(self) -> None:
        with self.lock:
            if self.phase == "scheduled" and time.monotonic() >= self.train_at - 0.05:
                self._start(self._train)

    def _cancel_schedule(self) -> None:
        self.timer.cancel()
        self.phase, self.train_at = "labelling", None

    def _start(self, work) -> None:
        """Run ``work`` in the background after the work before it (a round does not train beside an estimate)."""
        with self.lock:
            previous = self.worker
            if work == self._train:
                if self.phase == "training":
                    return
                self.phase, self.error = "training", None
            self.started = time.monotonic()

            def run() -> None:
                if previous is not None:
                    previous.join()
                work()

            self.worker = threading.Thread(target=run, name=f"labelling-{work.__name__.strip('_')}", daemon=True)
            self.worker.start()

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
            if phase == "labelling":
                state = ArmState.load(self.folder)
                self._apply_corrections(state)  # those given while it trained
                if state.pending:
                    self._round_ready()
        if phase == "labelling":
            self._estimate()

    def _round_ready(self) -> None:
        for callback in self.on_round_ready:
            try:
                callback()
            except Exception:  # a listener's failure is its own: the round waits for labels all the same
                logger.exception("a listener of the round's queries failed")

    def _estimate(self) -> None:
        """The last finished round's cross-validated accuracy on its labels, when the data has no test split."""
        from st_contrastive.active.accuracy_estimate import cross_validated_accuracy
        from st_contrastive.default_model import default_model

        state = ArmState.load(self.folder)
        if self.data.test_texts or not self.settings.estimate_folds or not state or not state.rounds:
            return
        round_number = len(state.rounds) - 1
        if str(round_number) in self._estimates():
            return
        labelled = state.labelled_at(round_number)
        with self.lock:
            self.estimating = True
        try:
            estimate = cross_validated_accuracy(
                self.config.objectives[0],
                self.config.model or default_model(),
                [self.data.train_texts[i] for i in labelled],
                list(labelled.values()),
                self.label_names,
                self.config.training,
                self.settings.estimate_folds,
                self.config.seed,
                self.folder / "checkpoints",
            )
        except Exception:  # an estimate is a help, not the run: the page goes on without it
            logger.exception("the accuracy estimate of round %d failed", round_number)
            estimate = None
        with self.lock:
            self.estimating = False
            if estimate is not None:
                write_atomically(
                    self.folder / ESTIMATES, json.dumps(self._estimates() | {str(round_number): estimate}, indent=1)
                )

    def _estimates(self) -> dict[str, dict]:
        path = self.folder / ESTIMATES
        return json.loads(path.read_text()) if path.is_file() else {}

    def wait(self, timeout: float | None = None) -> None:
        """Until the background work (if any) has finished: for scripts and tests."""
        worker = self.worker
        if worker is not None:
            worker.join(timeout)

    # At the budget.

    def export(self) -> Path:
        """Every label of the run as ``labelled.csv`` in the run folder (id, text, label, round, labelled_by,
        labelled_at): the file's own labels first, then each round's queries in the order they were labelled."""
        with self.lock:
            from_file, from_rounds = self._labelled_rows()
            rows = from_file + sorted(from_rounds, key=lambda row: (row["round"], row["labelled_at"] or ""))
            path = self.run_dir / "labelled.csv"
            write_csv_atomically(path, EXPORT_COLUMNS, rows)
            return path

    def commands(self) -> list[str]:
        """What to run with the finished model: its encoder on STS and transfer tasks (the classifier's accuracy is
        in ``results.json`` when the data has a test split), and publishing it with its card."""
        model = self.folder / "model"
        return [f"st-contrastive evaluate {model}", f"st-contrastive push {model} --repo-id USER/NAME"]

    # The queries files.

    def _round(self, round_number: int) -> list[dict]:
        """The rows of ``round_number``'s queries file, if it is the round that waits for labels."""
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
        return self._rows(state)

    def _queried(self, round_number: int, row_id: int) -> tuple[list[dict], dict]:
        if self.phase == "scheduled":
            raise Refused("the round is labelled and about to train; undo your last label first", conflict=True)
        rows = self._round(round_number)
        row = next((row for row in rows if int(row["id"]) == row_id), None)
        if row is None:
            raise Refused(f"row {row_id} was not queried in round {round_number}")
        return rows, row

    def _round_of(self, state: ArmState | None, row_id: int) -> tuple[int, Path, list[dict]]:
        """The round whose queries file holds a label for ``row_id``, that file and its rows."""
        last = (state.pending.round if state.pending else len(state.rounds)) if state else -1
        for round_number in range(last, -1, -1):
            path = queries_path(self.folder, round_number)
            if path.is_file():
                rows = self._read(path)
                if any(int(row["id"]) == row_id and row["label"] for row in rows):
                    return round_number, path, rows
        raise Refused(f"row {row_id} has no label to correct")

    def _rows(self, state: ArmState) -> list[dict]:
        """The rows of the pending round's queries file (written first if the run stopped before writing it)."""
        path = queries_path(self.folder, state.pending.round)
        if not path.is_file():
            write_queries(path, state.pending, self.data.train_texts)
        return self._read(path)

    @staticmethod
    def _read(path: Path) -> list[dict]:
        rows = [{column: row.get(column) or "" for column in COLUMNS} for row in read_rows(path)]
        for row in rows:
            row["label"] = spreadsheet_text(row["label"].strip())
        return rows

    @staticmethod
    def _write(path: Path, rows: list[dict]) -> None:
        write_csv_atomically(path, COLUMNS, rows)

    @staticmethod
    def _complete(rows: list[dict]) -> bool:
        return bool(rows) and all(row["label"] for row in rows)


def predict(model_dir: Path, texts: list[str], ids: list[int]) -> dict[int, tuple[str, float]]:
    """The label the saved round model gives each of ``ids``, and its probability."""
    from st_contrastive.scale.round_training import RoundModel

    model = RoundModel.load(model_dir)
    probabilities = model.proba([texts[i] for i in ids])
    labels = model.classifier.labels
    return {i: (labels[int(p.argmax())], round(float(p.max()), 3)) for i, p in zip(ids, probabilities, strict=True)}
