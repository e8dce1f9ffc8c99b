"""Label Studio's machine-learning backend for an active-learning run (``--oracle human``): Label Studio shows the
texts and takes the labels, SCALe chooses which texts come next and trains on them, over the same run folder as the
labelling page (a :class:`~st_contrastive.active.labelling.LabellingSession` does the run's side: the queries files,
the history, each round's training in the background, resume, one writer).

Label Studio calls the backend at the URL pasted into its project (Settings > Model), e.g.
``http://127.0.0.1:9090/TOKEN``: ``GET /health``, ``POST /setup`` (its model version), ``POST /predict`` (a label
and a score per task) and, through the project webhook it creates on connection, ``POST /webhook`` for every
annotation. A prediction's score is SCALe's acquisition order: the texts the pending round queried and that still
need a label score below 0.5, in the order SCALe acquired them, every other text above it, so sorting the Data
Manager by "Prediction score" ascending gives the next queries first. Each prediction's model version is the rounds
trained so far (``round-N``): after a round trains, Label Studio asks for the new version's predictions.

Each annotation event is appended to ``label-studio-annotations.jsonl`` in the run folder (synced) before anything
else happens, and the file is replayed when the backend starts, so a kill at any moment loses no label. A label for
a text no round has queried yet waits there until a round queries it.

Label Studio refuses a backend on this machine's loopback address, and creates the webhook to it (with no auth,
hence the token in the URL's path), only in the environment :data:`LABEL_STUDIO_ENVIRONMENT` names. It allows a backend 1 s for ``/health`` and each webhook, 3 s for ``/setup`` and
100 s for ``/predict``: training runs in the background, and no request waits for it.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import logging
import os
import threading
from dataclasses import dataclass
from functools import lru_cache
from xml.etree import ElementTree

from st_contrastive.active.label_studio_export import ModelSwapping, latest_round_model, model_version
from st_contrastive.active.labelling import LabellingSession, Refused, now
from st_contrastive.active.labelling_app import LOCAL_HOSTS, host_name
from st_contrastive.active.oracle import IGNORED
from st_contrastive.active.state import ArmState
from st_contrastive.atomic_files import write_atomically
from st_contrastive.data.label_studio import choices_result, is_label_studio_export, read_label_studio_export
from st_contrastive.extras import require_extra

fastapi = require_extra("fastapi", "active")
responses = require_extra("fastapi.responses", "active")

logger = logging.getLogger(__name__)

# What Label Studio's environment needs for a backend on this machine: its model URL (ML_BLOCK_LOCAL_IP) and the
# webhook it creates to it (SSRF_PROTECTION_ENABLED) may then be a loopback address, and the Data Manager's
# "Prediction score" follows the connected model's current version (a flag of Label Studio's own, off by default:
# without it the score stays with the first version Label Studio saw, and later rounds show none).
LABEL_STUDIO_ENVIRONMENT = {
    "ML_BLOCK_LOCAL_IP": "false",
    "SSRF_PROTECTION_ENABLED": "false",
    "ff_front_dev_1682_model_version_dropdown_070622_short": "true",
}
# Every annotation event Label Studio sent, one JSON line each, in the run folder: the backend's own record.
STORE = "label-studio-annotations.jsonl"
MODEL_CLASS = "SCALe"
# A /predict batch carries each task with its annotations and predictions (a few kB): a Data Manager's "Retrieve
# predictions" on tens of thousands of tasks fits, a runaway body does not.
MAX_BODY_BYTES = 64 * 1024 * 1024
# Who labelled, when an event does not say (a deletion carries only the annotation's id).
LABEL_STUDIO = "label-studio"
# A row's label withdrawn in Label Studio (its annotation deleted, or saved with no choice).
CLEARED = ""


class Refusal(ValueError):
    """A request the backend answers with ``status`` (4xx, or 503 while the model is swapped) and one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class ChoicesTag:
    """The project's one ``<Choices name=.. toName=..>`` and the task data key of the text it labels
    (``<Text name=.. value="$text">``: ``text``)."""

    name: str
    to_name: str
    text_key: str | None


FITTING_CONFIG = "`st-contrastive label-studio-export` writes a labelling interface that fits"


@lru_cache(maxsize=8)
def choices_tag(label_config: str, label_names: tuple[str, ...]) -> ChoicesTag:
    """The project's labelling interface (its XML ``label_config``) read for the run's labels: one single-choice
    ``<Choices>`` whose ``<Choice value=..>`` set is the run's label names (``(ignored)`` may be one more), or a
    :class:`Refusal` naming what does not fit."""
    where = "the project's labelling interface (Settings > Labeling Interface)"
    try:
        root = ElementTree.fromstring(label_config)
    except ElementTree.ParseError as error:
        raise Refusal(422, f"{where} is not XML ({error}); {FITTING_CONFIG}") from None
    tags = [element for element in root.iter() if element.tag == "Choices"]
    if len(tags) != 1:
        raise Refusal(
            422,
            f"{where} has {len(tags)} <Choices> tags; SCALe fills one, with the run's labels {list(label_names)} "
            f"({FITTING_CONFIG})",
        )
    tag = tags[0]
    name, to_name = tag.get("name"), tag.get("toName")
    if not name or not to_name:
        raise Refusal(422, f"{where}: its <Choices> needs both name= and toName= ({FITTING_CONFIG})")
    if tag.get("choice", "single") != "single":
        raise Refusal(422, f'{where}: <Choices name="{name}"> has choice="{tag.get("choice")}"; a text has one label')
    values = [choice.get("value") for choice in tag.iter("Choice")]
    if set(values) - {IGNORED} != set(label_names):
        raise Refusal(
            422,
            f'{where}: <Choices name="{name}"> offers {values}, the run\'s labels are {list(label_names)}; give it '
            f"one <Choice value=..> per label ({FITTING_CONFIG})",
        )
    text = next((element for element in root.iter() if element.get("name") == to_name), None)
    if text is None:
        raise Refusal(422, f'{where}: <Choices toName="{to_name}"> names no tag ({FITTING_CONFIG})')
    value = text.get("value") or ""
    return ChoicesTag(name, to_name, value[1:] if value.startswith("$") else None)


def annotator(annotation: dict) -> str:
    """Who gave ``annotation``: Label Studio's ``completed_by`` (a user id in a webhook, a user or an email in an
    export)."""
    by = annotation.get("completed_by")
    if isinstance(by, dict):
        by = by.get("email") or by.get("id")
    if by is None or by == "":
        return LABEL_STUDIO
    return by if isinstance(by, str) else f"{LABEL_STUDIO} user {by}"


def task_rows(dataset: str, texts: list[str]) -> dict[int, int] | None:
    """Task id -> row, when the run's dataset is a Label Studio export whose tasks are the run's rows in order (no
    test split, no pool drawn from it); None otherwise (the tasks must then carry ``data.row``)."""
    if not is_label_studio_export(dataset):
        return None
    export = read_label_studio_export(dataset)
    same_rows = export.texts == texts
    return {int(task_id): row for row, task_id in enumerate(export.task_ids)} if same_rows else None


class LabelStudioBackend:
    """What Label Studio's requests do to the run in ``session``'s folder: predictions with SCALe's order, and each
    annotation event recorded, then given to the session (a label of the pending round, a correction of an earlier
    one, a withdrawn label, or one that waits until a round queries its row)."""

    def __init__(self, session: LabellingSession) -> None:
        self.session = session
        self.store = session.run_dir / STORE
        self.texts = session.data.train_texts
        self.names = tuple(session.label_names)
        self.task_rows = task_rows(session.config.dataset, self.texts)
        self.label_config: str | None = None  # the project's, from /setup: /predict and webhooks carry it too
        # The store folded: row -> annotation id -> its latest event, and the rows whose label was withdrawn.
        self.by_row: dict[int, dict[int, dict]] = {}
        self.withdrawn: set[int] = set()
        self.events = 0
        # The round model Label Studio's predictions come from, loaded once per version, and its guesses so far.
        self.model_lock = threading.Lock()
        self.model_version: int | None = None
        self.model = None
        self.guesses: dict[int, tuple[str, float]] = {}
        with session.lock:  # the session's lock guards the fold too: its round-ready callback applies labels
            for event in self._read_store():
                self._fold(event)
            session.on_round_ready.append(self._round_ready)
            for row in sorted(set(self.by_row) | self.withdrawn):  # the store replayed: what a kill cut short
                self._apply_quietly(row)
        threading.Thread(target=self._warm, name="label-studio-model", daemon=True).start()

    # The store: every annotation event, appended before it is applied.

    def _read_store(self) -> list[dict]:
        if not self.store.is_file():
            return []
        text = self.store.read_text(encoding="utf-8")
        lines = text.splitlines()
        if lines and not text.endswith("\n"):  # a kill cut the last append short: that event was never answered
            logger.warning("%s: dropping a torn last line (an event a kill cut short)", self.store)
            lines.pop()
            write_atomically(self.store, "".join(line + "\n" for line in lines))
        return [json.loads(line) for line in lines if line]

    def _record(self, event: dict) -> None:
        with self.store.open("a", encoding="utf-8") as f:
            f.write(json.dumps(event) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def _fold(self, event: dict) -> None:
        self.events += 1
        row, annotation = event["row"], event["annotation"]
        annotations = self.by_row.setdefault(row, {})
        before = annotations.get(annotation)
        if event["event"] in ("ANNOTATIONS_DELETED", "ANNOTATION_DELETED"):
            annotations.pop(annotation, None)
            if before and before["label"]:
                self.withdrawn.add(row)
            return
        annotations[annotation] = event | {"seq": self.events}
        if before and before["label"] and not event["label"] and not event["skipped"]:
            self.withdrawn.add(row)

    def _wanted(self, row: int) -> tuple[str | None, str]:
        """The label Label Studio's annotations give ``row`` (the latest one given; ``CLEARED``: withdrawn; None: no
        label was given), and who gave it."""
        labelled = [event for event in self.by_row.get(row, {}).values() if event["label"]]
        if labelled:
            latest = max(labelled, key=lambda event: event["seq"])
            return latest["label"], latest["who"]
        return (CLEARED if row in self.withdrawn else None), LABEL_STUDIO

    # Applying a row's label to the run.

    def _apply(self, row: int) -> str:
        """Make the run's label of ``row`` what the annotations say, as far as the run allows now; what was done."""
        session = self.session
        wanted, who = self._wanted(row)
        if wanted is None:
            return "no label given"
        standing = {entry["id"]: entry for entry in session.review()}.get(row)
        state = ArmState.load(session.folder)
        pending = state.pending if state and session.phase != "training" else None
        if standing and not standing["editable"]:
            if wanted in (CLEARED, standing["label"]):
                return "unchanged"
            raise Refusal(
                409,
                f"row {row} is labelled {standing['label']!r} in {session.config.dataset}, and the run takes that "
                "file's labels: change it there",
            )
        if wanted == CLEARED:
            if standing is None:
                return "unchanged"
            if pending is None or standing["round"] != pending.round:
                return f"kept: round {standing['round']} has trained on row {row}'s label"
            session.clear(pending.round, row, who)
            return "cleared"
        if standing is None:
            if pending is not None and row in pending.ids:
                session.label(pending.round, row, wanted, who)
                return "labelled"
            return f"kept until a round queries row {row}"
        if standing["label"] == wanted:
            return "unchanged"
        session.edit(row, wanted, who)
        return "corrected"

    def _apply_quietly(self, row: int) -> None:
        try:
            self._apply(row)
        except (Refused, Refusal) as error:  # recorded in the store; the person sees the run's own state
            logger.warning("the label Label Studio gave row %d is not applied: %s", row, error)

    def _round_ready(self) -> None:
        """A round's queries wait for labels (called under the session's lock): those given already are applied."""
        state = ArmState.load(self.session.folder)
        for row in state.pending.ids if state and state.pending else []:
            if row in self.by_row or row in self.withdrawn:
                self._apply_quietly(row)
        threading.Thread(target=self._warm, name="label-studio-model", daemon=True).start()

    # Label Studio's requests.

    def row_of(self, task: dict, tag: ChoicesTag | None) -> int:
        """The run row a task is: its ``data.row`` (the tasks ``label-studio-export`` writes), or its id when the
        run's dataset is a Label Studio export; checked against the row's text."""
        task_id = task.get("id")
        data = task.get("data") if isinstance(task.get("data"), dict) else {}
        row = data.get("row")
        if isinstance(row, str) and row.strip().isdigit():
            row = int(row)
        if row is None and self.task_rows is not None:
            row = self.task_rows.get(task_id)
        if not isinstance(row, int) or isinstance(row, bool) or not 0 <= row < len(self.texts):
            raise Refusal(
                422,
                f"task {task_id} maps to no row of {self.session.run_dir} (data.row is {data.get('row')!r}; the run "
                f"has rows 0 to {len(self.texts) - 1}): import the tasks `st-contrastive label-studio-export` writes "
                "for this run, each with its data.row",
            )
        text = data.get(tag.text_key) if tag and tag.text_key else None
        if isinstance(text, str) and text.strip() != self.texts[row].strip():
            raise Refusal(
                422,
                f"task {task_id}: its text is not row {row}'s of {self.session.config.dataset}; the project's tasks "
                "come from another run: import this run's tasks, or serve the run they came from",
            )
        return row

    def tag(self, label_config: str | None) -> ChoicesTag | None:
        config = label_config or self.label_config
        return choices_tag(config, self.names) if config else None

    def version(self) -> int:
        state = ArmState.load(self.session.folder)
        return len(state.rounds) if state else 0

    def health(self) -> dict:
        state = ArmState.load(self.session.folder)
        return {
            "status": "UP",
            "model_class": MODEL_CLASS,
            "model_version": model_version(len(state.rounds) if state else 0),
            "phase": "done"
            if state and state.phase == "done" and self.session.phase == "labelling"
            else self.session.phase,
            "round": state.pending.round if state and state.pending else None,
        }

    def setup(self, body: dict) -> dict:
        """The project's labelling interface checked (one line if it does not fit), and the current model version:
        Label Studio asks for predictions of the tasks that have none of it."""
        schema = body.get("schema") or body.get("label_config")
        if not isinstance(schema, str) or not schema.strip():
            raise Refusal(422, "/setup carries no labelling interface (its schema): connect the backend from a project")
        choices_tag(schema, self.names)
        self.label_config = schema
        return {"model_version": model_version(self.version())}

    def predict(self, body: dict) -> dict:
        """One prediction per task, in order: the round model's label and SCALe's order as the score."""
        tasks = body.get("tasks")
        if not isinstance(tasks, list) or not all(isinstance(task, dict) for task in tasks):
            raise Refusal(422, "/predict needs a list of tasks")
        tag = self.tag(body.get("label_config"))
        if tag is None:
            raise Refusal(422, "/predict carries no label_config and /setup has not been called: reconnect the model")
        rows = [self.row_of(task, tag) for task in tasks]
        labelled = {entry["id"] for entry in self.session.review()}  # before the model's lock, never inside it
        version, state, guesses = self._guesses(rows)
        queried = state.pending.ids if state and state.pending and self.session.phase != "training" else []
        waiting = {row: position for position, row in enumerate(queried) if row not in labelled}
        results = []
        for row in rows:
            guess = guesses.get(row)
            if row in waiting:
                score = 0.5 * waiting[row] / len(queried)
            else:
                score = 0.5 + 0.5 * guess[1] if guess else 1.0
            result = []
            if guess:
                result = choices_result(guess[0], from_name=tag.name, to_name=tag.to_name)
            results.append({"result": result, "score": round(score, 6), "model_version": model_version(version)})
        return {"results": results}

    def _guesses(self, rows: list[int]) -> tuple[int, ArmState | None, dict[int, tuple[str, float]]]:
        """The rounds trained, the state read with them, and the latest round model's label and probability for
        ``rows`` (none before a round has trained)."""
        with self.model_lock:
            state = self._load_model()
            missing = [row for row in dict.fromkeys(rows) if row not in self.guesses]
            if self.model is not None and missing:
                probabilities = self.model.proba([self.texts[row] for row in missing])
                labels = self.model.classifier.labels
                for row, p in zip(missing, probabilities, strict=True):
                    self.guesses[row] = (labels[int(p.argmax())], float(p.max()))
            return self.model_version, state, {row: self.guesses[row] for row in rows if row in self.guesses}

    def _load_model(self) -> ArmState | None:
        """The state, with the model of its last round loaded (at most once per round)."""
        state = ArmState.load(self.session.folder)
        if (len(state.rounds) if state else 0) == self.model_version:
            return state
        try:
            self.model, self.model_version = latest_round_model(self.session.folder)
        except ModelSwapping:
            raise Refusal(503, "a round is finishing (its model is being swapped in): ask again in a moment") from None
        self.guesses = {}
        return state

    def _warm(self) -> None:
        """Load the latest round model before Label Studio asks (a first /predict would wait for it), and let the
        session guess the round's queries (its first label would wait for that, past a webhook's second)."""
        try:
            self.session.status(LABEL_STUDIO)
            with self.model_lock:  # never taken under the session's lock: no two threads take them crosswise
                self._load_model()
        except Exception:  # the first /predict loads it again, and says why it cannot
            logger.debug("the round model is not loaded yet", exc_info=True)

    def webhook(self, body: dict) -> tuple[int, dict]:
        """An event of the project's webhook: annotations created (one, or several at once), updated, deleted or
        skipped, and "Start Training"; other events are answered and ignored."""
        action = body.get("action")
        project = body.get("project") if isinstance(body.get("project"), dict) else {}
        if action in ("ANNOTATION_CREATED", "ANNOTATION_UPDATED"):
            done = self.annotated(action, body.get("task"), body.get("annotation"), project)
        elif action == "ANNOTATIONS_CREATED":
            tasks = {task.get("id"): task for task in _dicts(body.get("task"))}
            done = [
                self.annotated(action, tasks.get(a.get("task")), a, project) for a in _dicts(body.get("annotation"))
            ]
        elif action in ("ANNOTATIONS_DELETED", "ANNOTATION_DELETED"):
            done = [self.deleted(item.get("id")) for item in _dicts(body.get("annotations") or body.get("annotation"))]
        elif action == "START_TRAINING":
            done = self.train()
        else:
            return 200, {"status": "ignored", "action": action}
        return 201, {"status": "ok", "result": done}

    def annotated(self, action: str, task: dict | None, annotation: dict | None, project: dict) -> str:
        """Record an annotation of ``task`` and apply its label (or skip) to the task's row; what was done."""
        return self._handle(self._event(action, task, annotation, project))

    def _event(self, action: str, task: dict | None, annotation: dict | None, project: dict) -> dict:
        """The store's record of an annotation event: its task's row, the label chosen (None: none), who, when."""
        if not isinstance(task, dict) or not isinstance(annotation, dict):
            raise Refusal(422, f"{action} carries no task or annotation")
        tag = self.tag(project.get("label_config"))
        row = self.row_of(task, tag)
        skipped = bool(annotation.get("was_cancelled"))
        return {
            "event": action,
            "annotation": annotation.get("id"),
            "task": task.get("id"),
            "row": row,
            "label": None if skipped else self._choice(annotation, task, tag),
            "skipped": skipped,
            "who": annotator(annotation),
            "when": now(),
        }

    def _handle(self, event: dict) -> str:
        with self.session.lock:
            self._record(event)  # first: a kill from here on loses nothing, the store is replayed at start
            self._fold(event)
            if event["skipped"]:
                return self._skip(event["row"], event["who"])
            return self._apply(event["row"])

    def _choice(self, annotation: dict, task: dict, tag: ChoicesTag | None) -> str | None:
        """The label an annotation chose (None: it chose none)."""
        items = [
            item
            for item in annotation.get("result") or []
            if isinstance(item, dict)
            and item.get("type") == "choices"
            and (tag is None or item.get("from_name") == tag.name)
        ]
        choices = [choice for item in items for choice in (item.get("value") or {}).get("choices") or []]
        if len(choices) > 1:
            raise Refusal(422, f"annotation {annotation.get('id')} of task {task.get('id')} chose {choices}: one label")
        if choices and choices[0] not in self.names and choices[0] != IGNORED:
            raise Refusal(
                422,
                f"annotation {annotation.get('id')} of task {task.get('id')} chose {choices[0]!r}, not one of the run's "
                f"labels {list(self.names)}",
            )
        return choices[0] if choices else None

    def _skip(self, row: int, who: str) -> str:
        state = ArmState.load(self.session.folder)
        pending = state.pending if state and self.session.phase == "labelling" else None
        labelled = {entry["id"] for entry in self.session.review()}
        if pending is None or row not in pending.ids or row in labelled:
            return "unchanged"
        self.session.skip(pending.round, row, who)
        return "skipped"

    def deleted(self, annotation_id) -> str:
        """An annotation deleted: its row's label is what the task's other annotations say, or none (cleared while
        its round has not trained)."""
        with self.session.lock:
            row = next((row for row, events in self.by_row.items() if annotation_id in events), None)
            if row is None:
                return f"annotation {annotation_id} gave no label here"
            event = {"event": "ANNOTATIONS_DELETED", "annotation": annotation_id, "row": row, "when": now()}
            self._record(event)
            self._fold(event)
            return self._apply(row)

    def train(self) -> str:
        """Train the labelled round now ("Start Training"), or say what it waits for."""
        session = self.session
        with session.lock:
            state = ArmState.load(session.folder)
            if session.phase == "scheduled":
                session.train_now()
                return f"round {state.pending.round} trains now"
            if session.phase == "training":
                return "a round is training"
            if session.phase == "failed":
                session.retry()
                return f"training again after: {session.error}"
            if state is None or state.pending is None:
                raise Refusal(409, "no round waits for labels: the run has reached its budget")
            labelled = {entry["id"] for entry in session.review()}
            missing = sum(row not in labelled for row in state.pending.ids)
            raise Refusal(
                409,
                f"round {state.pending.round} has {missing} of its {len(state.pending.ids)} queried texts without a "
                "label: label those first (they sort first by Prediction score)",
            )

    def train_request(self, body: dict) -> dict:
        """Label Studio's older "train" call: every annotated task, each annotation that the store does not hold as
        it is applied as the webhook's event would be (what a stopped backend missed comes in this way), then
        :meth:`train`."""
        project = {"label_config": body.get("label_config")}
        tasks = [task for task in body.get("annotations") or [] if isinstance(task, dict)]
        with self.session.lock:
            for task in tasks:
                for annotation in task.get("annotations") or []:
                    event = self._event("ANNOTATION_UPDATED", task, annotation, project)
                    known = self.by_row.get(event["row"], {}).get(event["annotation"])
                    if known is None or (known["label"], known["skipped"]) != (event["label"], event["skipped"]):
                        self._handle(event)
        return {"status": "ok", "result": self.train()}

    def versions(self) -> dict:
        return {"versions": [model_version(n) for n in range(self.version() + 1)]}


def _dicts(value) -> list[dict]:
    """The objects of a payload's field that holds one or a list of them."""
    return [item for item in (value if isinstance(value, list) else [value]) if isinstance(item, dict)]


def _refuse(status: int, message: str, headers: dict | None = None):
    return responses.JSONResponse({"error": message}, status_code=status, headers=headers)


def _basic_password(authorization: str) -> str | None:
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        return base64.b64decode(value.strip(), validate=True).decode("utf-8").partition(":")[2]
    except (binascii.Error, UnicodeDecodeError):
        return None


def guarded(app, token: str, hosts: frozenset[str] = LOCAL_HOSTS):
    """``app`` behind the guards of a service that Label Studio's server calls (as Jupyter guards its own):

    - every request carries ``token``, as the URL's first path segment (``http://127.0.0.1:9090/TOKEN`` is the URL
      pasted into Label Studio: its webhook posts to ``/TOKEN/webhook`` with no auth) or as the HTTP Basic password
      (Label Studio's "Basic Auth" setting, any user name);
    - its ``Host`` is one of ``hosts`` (a DNS-rebinding page names its own);
    - it carries no ``Origin``: a server calls this, a browser page never does;
    - a body declares its length, at most ``MAX_BODY_BYTES``."""
    expected = token.encode()

    def refusal(scope: dict, headers: dict[str, str]):
        if host_name(headers.get("host", "")) not in hosts:
            return 403, f"Host {headers.get('host', '')!r} is not this backend's address (--allow-host adds one)"
        if "origin" in headers:
            return 403, "a browser page may not call the backend: Label Studio's server does"
        password = _basic_password(headers.get("authorization", ""))
        if password is None or not hmac.compare_digest(password.encode(), expected):
            return 401, (
                "this backend needs its token: paste the URL `st-contrastive label-studio-backend` printed "
                "(http://HOST:PORT/TOKEN) as the model's URL, or give the token as the Basic Auth password"
            )
        if scope["method"] not in ("GET", "HEAD"):
            length = headers.get("content-length")
            if length is None or not length.isdigit():
                return 411, "a request body must declare its length"
            if int(length) > MAX_BODY_BYTES:
                return 413, f"a request body is at most {MAX_BODY_BYTES // 2**20} MiB: ask for fewer tasks at once"
        return None

    async def guard(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
        first, _, rest = scope["path"].lstrip("/").partition("/")
        if hmac.compare_digest(first.encode(), expected):  # the token as the path's first segment: the rest is routed
            path = "/" + rest
            scope = dict(scope, path=path, raw_path=path.encode())
            headers["authorization"] = "Basic " + base64.b64encode(b":" + expected).decode()
        answer = refusal(scope, headers)
        if answer is not None:
            status, message = answer
            logger.warning("refused a request (%d): %s", status, message)
            extra = {"WWW-Authenticate": 'Basic realm="st-contrastive"'} if status == 401 else None
            return await _refuse(status, message, extra)(scope, receive, send)
        return await app(scope, receive, send)

    return guard


def create_app(backend: LabelStudioBackend, token: str, hosts: frozenset[str] = LOCAL_HOSTS):
    """Label Studio's ML backend API over ``backend``, behind :func:`guarded`. Its answers:

    - ``GET /`` and ``/health``: ``{"status": "UP", "model_class": "SCALe", "model_version", "phase", "round"}``;
    - ``POST /setup`` ``{"project", "schema", ...}``: ``{"model_version": "round-N"}``;
    - ``POST /predict`` ``{"tasks": [...], "label_config", ...}``: ``{"results": [{"result", "score",
      "model_version"}, ...]}``, one per task in order;
    - ``POST /webhook`` ``{"action", "project", "task", "annotation"}``: 201 ``{"status": "ok", "result"}`` (200
      ``{"status": "ignored"}`` for other actions);
    - ``POST /train``: 201 ``{"status": "ok", "result"}``; ``GET /versions``: ``{"versions": [...]}``.

    A refusal is ``{"error": "one line"}`` with a 4xx status (503 while a round's model is being swapped in), and
    the same line in the backend's log: Label Studio shows only the status."""
    app = fastapi.FastAPI(title="st-contrastive SCALe backend", docs_url=None, redoc_url=None, openapi_url=None)

    @app.exception_handler(Refusal)
    async def refused(request, error: Refusal):
        logger.warning("%s %s: %s", request.method, request.url.path, error)
        return _refuse(error.status, str(error))

    @app.exception_handler(Refused)
    async def refused_by_run(request, error: Refused):
        logger.warning("%s %s: %s", request.method, request.url.path, error)
        return _refuse(409 if error.conflict else 400, str(error))

    @app.middleware("http")
    async def headers(request, call_next):
        response = await call_next(request)
        response.headers.update({"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"})
        return response

    @app.get("/")
    @app.get("/health")
    def health() -> dict:
        return backend.health()

    @app.post("/setup")
    def setup(body: dict) -> dict:
        return backend.setup(body)

    @app.post("/predict")
    def predict(body: dict) -> dict:
        return backend.predict(body)

    @app.post("/webhook")
    def webhook(body: dict):
        status, answer = backend.webhook(body)
        return responses.JSONResponse(answer, status_code=status)

    @app.post("/train")
    def train(body: dict):
        return responses.JSONResponse(backend.train_request(body), status_code=201)

    @app.get("/versions")
    def versions() -> dict:
        return backend.versions()

    return guarded(app, token, hosts)
