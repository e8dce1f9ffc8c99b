"""SCALe as Label Studio's machine-learning backend, driven as Label Studio drives it (its /health, /setup, /predict,
/webhook and /train payloads, through FastAPI's TestClient over the real app) on a real human-oracle run with a tiny
model: the guards, the project's labelling interface checked, predictions whose score is SCALe's acquisition order,
annotations that label, correct, withdraw, skip and train rounds, a label that waits for its row to be queried, and a
restarted backend that replays its store. One test starts the command as a process."""

import base64
import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from labelling_server import free_port
from support_tickets import ARM, SUPPORT, copy_of_run, human_run_command, queries, write_support_csv

from st_contrastive.active import ArmState
from st_contrastive.active.label_studio_backend import STORE, LabelStudioBackend, create_app
from st_contrastive.active.labelling import HISTORY, LabellingSession
from st_contrastive.active.labelling_settings import LabellingSettings
from st_contrastive.scale.round_training import RoundModel

GOLD = {text: label for label, texts in SUPPORT.items() for text in texts}
LABELS = sorted(SUPPORT)
TOKEN = "Zq3_backend-token-0123456789"
AT_ONCE = LabellingSettings(grace_seconds=0, estimate_folds=0)  # a labelled round trains at its last label
# The labelling interface `label-studio-export` writes: one text, one single choice among the run's labels.
LABEL_CONFIG = (
    '<View><Text name="text" value="$text"/><Choices name="label" toName="text" choice="single" showInLine="true">'
    + "".join(f'<Choice value="{name}"/>' for name in LABELS)
    + "</Choices></View>"
)
PROJECT = {"id": 3, "title": "tickets", "label_config": LABEL_CONFIG, "created_at": "2026-01-05T10:00:00.000000Z"}

pytestmark = pytest.mark.usefixtures("short_rounds")


@pytest.fixture()
def run_dir(human_run, tmp_path):
    return copy_of_run(human_run, tmp_path)


def backend_for(run_dir, settings=AT_ONCE) -> tuple[LabelStudioBackend, TestClient]:
    """The backend of ``run_dir`` and Label Studio's client of it, at the URL pasted into the project (the token as
    the path's first segment, as LS's webhook posts it), from the server's side (Host 127.0.0.1:9090)."""
    backend = LabelStudioBackend(LabellingSession(run_dir, "label-studio", settings))
    client = TestClient(create_app(backend, TOKEN), base_url=f"http://127.0.0.1:9090/{TOKEN}/")
    return backend, client


def task(backend: LabelStudioBackend, row: int) -> dict:
    """A Label Studio task of run row ``row`` as `label-studio-export` writes it and LS serializes it."""
    return {
        "id": 500 + row,
        "data": {"text": backend.texts[row], "row": row},
        "meta": {},
        "created_at": "2026-01-05T10:00:01.000000Z",
        "updated_at": "2026-01-05T10:00:01.000000Z",
        "is_labeled": False,
        "overlap": 1,
        "inner_id": row + 1,
        "total_annotations": 0,
        "cancelled_annotations": 0,
        "total_predictions": 0,
        "project": PROJECT["id"],
        "annotations": [],
        "predictions": [],
    }


def annotation_event(action: str, the_task: dict, label: str | None, annotation_id: int, user: int = 7) -> dict:
    """The webhook LS posts when an annotation is submitted or updated (``label`` None: the task was skipped)."""
    result = (
        []
        if label is None
        else [
            {
                "id": "k2Jd9",
                "from_name": "label",
                "to_name": "text",
                "type": "choices",
                "origin": "manual",
                "value": {"choices": [label]},
            }
        ]
    )
    annotation = {
        "id": annotation_id,
        "result": result,
        "was_cancelled": label is None,
        "ground_truth": False,
        "created_at": "2026-01-05T10:01:00.000000Z",
        "updated_at": "2026-01-05T10:01:00.000000Z",
        "lead_time": 4.2,
        "task": the_task["id"],
        "project": PROJECT["id"],
        "completed_by": user,
        "updated_by": user,
        "parent_prediction": None,
        "parent_annotation": None,
        "last_action": None,
    }
    return {"action": action, "annotation": annotation, "task": the_task, "project": PROJECT}


def annotate(client, backend, row: int, label: str | None = None, action="ANNOTATION_CREATED", annotation_id=None):
    label = GOLD[backend.texts[row]] if label == "gold" else label
    body = annotation_event(action, task(backend, row), label, annotation_id or 9000 + row)
    response = client.post("webhook", json=body)
    assert response.status_code == 201, response.text
    return response.json()["result"]


def predict(client, backend, rows: list[int]) -> list[dict]:
    body = {
        "tasks": [task(backend, row) for row in rows],
        "project": f"{PROJECT['id']}.1767607200",
        "label_config": LABEL_CONFIG,
        "params": {"login": None, "password": None, "context": None},
    }
    response = client.post("predict", json=body)
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert len(results) == len(rows)
    return results


def settle(session: LabellingSession, timeout: float = 300) -> None:
    """Until no background work runs or follows (a round ready may start the next one at once)."""
    deadline = time.monotonic() + timeout
    while True:
        worker = session.worker
        session.wait(max(0.0, deadline - time.monotonic()))
        if session.worker is worker and session.phase not in ("training", "scheduled"):
            return
        assert time.monotonic() < deadline, "the rounds did not settle"


def pending(run_dir) -> list[int]:
    return ArmState.load(f"{run_dir}/{ARM}").pending.ids


def history(run_dir) -> list[tuple[str, int, str]]:
    lines = (Path(run_dir) / HISTORY).read_text().splitlines()
    return [(entry["action"], entry["id"], entry["who"]) for entry in map(json.loads, lines)]


def test_only_label_studios_server_with_the_token_gets_in(run_dir):
    backend, client = backend_for(run_dir)
    anyone = TestClient(create_app(backend, TOKEN), base_url="http://127.0.0.1:9090")
    basic = base64.b64encode(f"any-user:{TOKEN}".encode()).decode()
    assert anyone.get("/health").status_code == 401  # no token
    assert anyone.get(f"/{TOKEN[:-1]}x/health").status_code == 401  # a wrong one in the path
    wrong = base64.b64encode(b"any-user:guess").decode()
    assert anyone.get("/health", headers={"Authorization": f"Basic {wrong}"}).status_code == 401
    health = anyone.get("/health", headers={"Authorization": f"Basic {basic}"})  # LS's "Basic Auth" setting
    assert health.status_code == 200 and health.json()["model_class"] == "SCALe"
    assert client.get("").json() == client.get("health").json()  # /TOKEN and /TOKEN/health: the path's token
    assert client.get("health").json() == {
        "status": "UP",
        "model_class": "SCALe",
        "model_version": "round-1",
        "phase": "labelling",
        "round": 1,
    }
    before = queries(run_dir, 1)
    body = annotation_event("ANNOTATION_CREATED", task(backend, pending(run_dir)[0]), "bug", 1)
    refusals = {
        "foreign Host": client.post("webhook", json=body, headers={"Host": "attacker.example"}),
        "a browser page": client.post("webhook", json=body, headers={"Origin": "http://127.0.0.1:8080"}),
        "oversize": client.post(
            "webhook", content=b" " * (64 * 2**20 + 1), headers={"Content-Type": "application/json"}
        ),
        "no token": anyone.post("/webhook", json=body),
    }
    assert {name: r.status_code for name, r in refusals.items()} == {
        "foreign Host": 403,
        "a browser page": 403,
        "oversize": 413,
        "no token": 401,
    }
    assert "--allow-host" in refusals["foreign Host"].json()["error"]
    assert queries(run_dir, 1) == before and not (Path(run_dir) / STORE).exists()  # nothing refused was recorded
    allowed = TestClient(create_app(backend, TOKEN, frozenset({"host.docker.internal"})))
    assert allowed.get(f"http://host.docker.internal:9090/{TOKEN}/health").status_code == 200  # --allow-host


def test_setup_checks_the_projects_labelling_interface(run_dir):
    backend, client = backend_for(run_dir)
    setup = {
        "project": "3.1767607200",
        "schema": LABEL_CONFIG,
        "hostname": "http://localhost:8080",
        "access_token": "x",
    }
    response = client.post("setup", json=setup)
    assert (response.status_code, response.json()) == (200, {"model_version": "round-1"})
    unfit = {
        "other labels": LABEL_CONFIG.replace('"question"', '"feature"'),
        "two Choices": LABEL_CONFIG.replace(
            "</View>", '<Choices name="x" toName="text"><Choice value="a"/></Choices></View>'
        ),
        "several labels a text": LABEL_CONFIG.replace('choice="single"', 'choice="multiple"'),
        "no XML": "<View><Choices",
    }
    errors = {name: client.post("setup", json=setup | {"schema": config}) for name, config in unfit.items()}
    assert {name: r.status_code for name, r in errors.items()} == dict.fromkeys(unfit, 422)
    assert errors["other labels"].json()["error"] == (
        'the project\'s labelling interface (Settings > Labeling Interface): <Choices name="label"> offers '
        "['billing', 'bug', 'feature'], the run's labels are ['billing', 'bug', 'question']; give it one "
        "<Choice value=..> per label (`st-contrastive label-studio-export` writes a labelling interface that fits)"
    )
    assert "has 2 <Choices> tags" in errors["two Choices"].json()["error"]
    assert 'choice="multiple"' in errors["several labels a text"].json()["error"]
    # A webhook from a project whose interface does not fit changes nothing either.
    body = annotation_event("ANNOTATION_CREATED", task(backend, pending(run_dir)[0]), "bug", 1)
    body["project"] = PROJECT | {"label_config": unfit["other labels"]}
    assert client.post("webhook", json=body).status_code == 422
    assert all(not row["label"] for row in queries(run_dir, 1))


def test_a_task_that_is_no_row_of_the_run_is_refused_by_id(run_dir):
    backend, client = backend_for(run_dir)
    stray = task(backend, 0) | {"id": 77, "data": {"text": "Hello there"}}
    response = client.post("predict", json={"tasks": [stray], "label_config": LABEL_CONFIG})
    assert response.status_code == 422
    assert response.json()["error"].startswith("task 77 maps to no row of ")
    assert "`st-contrastive label-studio-export`" in response.json()["error"]
    other_text = task(backend, 0) | {"data": {"text": "Something else entirely", "row": 0}}
    response = client.post("predict", json={"tasks": [other_text], "label_config": LABEL_CONFIG})
    assert response.status_code == 422 and "its text is not row 0's" in response.json()["error"]


def test_predictions_sort_the_queries_first_and_annotations_train_the_next_round(run_dir):
    backend, client = backend_for(run_dir)
    rows = list(range(len(backend.texts)))[::-1]  # LS's order is its own
    queried = pending(run_dir)
    results = predict(client, backend, rows)
    assert {r["model_version"] for r in results} == {"round-1"}
    by_row = dict(zip(rows, results, strict=True))
    # Sorting by score ascending (the Data Manager's "Prediction score") gives round 1's queries in SCALe's order.
    assert sorted(rows, key=lambda row: by_row[row]["score"])[:3] == queried
    assert [by_row[row]["score"] for row in queried] == pytest.approx([0.0, 0.5 / 3, 1 / 3], abs=1e-6)
    # Every other row: 0.5 + half the round model's probability of the label it predicts, which is the result.
    model = RoundModel.load(f"{run_dir}/{ARM}/model")
    probabilities = model.proba(backend.texts)
    for row in rows:
        label = model.classifier.labels[int(probabilities[row].argmax())]
        assert by_row[row]["result"] == [
            {"from_name": "label", "to_name": "text", "type": "choices", "value": {"choices": [label]}}
        ]
        if row not in queried:
            assert by_row[row]["score"] == pytest.approx(0.5 + 0.5 * probabilities[row].max(), abs=1e-5)

    # The round's annotations, as LS's webhook sends them: each label is in the queries file at once; the last
    # one trains round 1 in the background, and the model version moves on.
    assert [annotate(client, backend, row, "gold") for row in queried] == ["labelled"] * 3
    settle(backend.session)
    assert client.post("setup", json={"project": "3.1", "schema": LABEL_CONFIG}).json() == {"model_version": "round-2"}
    assert [(int(r["id"]), r["label"], r["labelled_by"]) for r in queries(run_dir, 1)] == [
        (row, GOLD[backend.texts[row]], "label-studio user 7") for row in queried
    ]
    state = ArmState.load(f"{run_dir}/{ARM}")
    assert len(state.rounds) == 2 and state.rounds[-1]["labelled"] == 9
    results = predict(client, backend, rows)
    assert {r["model_version"] for r in results} == {"round-2"}
    by_row = dict(zip(rows, results, strict=True))
    ordered = sorted(rows, key=lambda row: by_row[row]["score"])
    assert ordered[:3] == state.pending.ids and by_row[ordered[3]]["score"] > 0.5
    assert all(by_row[row]["score"] > 0.5 for row in queried)  # labelled now: after every query
    # A label of round 1 updated in LS: the next round trains on the correction.
    row = queried[0]
    other = next(name for name in LABELS if name != GOLD[backend.texts[row]])
    assert annotate(client, backend, row, other, "ANNOTATION_UPDATED") == "corrected"
    assert ArmState.load(f"{run_dir}/{ARM}").labelled[row] == LABELS.index(other)
    assert history(run_dir)[-1] == ("edit", row, "label-studio user 7")


def test_before_any_round_has_trained_there_is_no_label_and_round_zeros_queries_come_first(tmp_path, base_model):
    from st_contrastive.commands.cli import main as cli_main

    write_support_csv(tmp_path / "tickets.csv", labelled_per_class=0)
    cli_main([*human_run_command(tmp_path / "tickets.csv", base_model, tmp_path / "run"), "--label-names", *LABELS])
    backend, client = backend_for(str(tmp_path / "run"))
    rows = list(range(len(backend.texts)))
    queried = pending(tmp_path / "run")
    results = predict(client, backend, rows)
    assert {r["model_version"] for r in results} == {"round-0"} and all(r["result"] == [] for r in results)
    assert sorted(rows, key=lambda row: results[row]["score"])[: len(queried)] == queried
    assert all(results[row]["score"] == 1.0 for row in rows if row not in queried)


def test_a_label_for_a_text_not_queried_yet_waits_for_the_round_that_queries_it(run_dir):
    backend, client = backend_for(run_dir)
    queried = pending(run_dir)
    state = ArmState.load(f"{run_dir}/{ARM}")
    later = [row for row in range(len(backend.texts)) if row not in state.labelled and row not in queried]
    # Someone labels ahead in LS, every text that no round has queried yet, imported at once (one webhook for all).
    events = [
        annotation_event("ANNOTATIONS_CREATED", task(backend, row), GOLD[backend.texts[row]], 9000 + row)
        for row in later
    ]
    bulk = {
        "action": "ANNOTATIONS_CREATED",
        "annotation": [event["annotation"] for event in events],
        "task": [event["task"] for event in events],
        "project": PROJECT,
    }
    response = client.post("webhook", json=bulk)
    assert response.json()["result"] == [f"kept until a round queries row {row}" for row in later]
    assert not (Path(run_dir) / f"{ARM}/queries-round-002.csv").exists()
    for row in queried:
        annotate(client, backend, row, "gold")
    # Round 1 trains; round 2's queries are labelled already, so it trains at once too: the budget is reached.
    settle(backend.session)
    state = ArmState.load(f"{run_dir}/{ARM}")
    assert state.phase == "done" and [r["labelled"] for r in state.rounds] == [6, 9, 12]
    round_two = queries(run_dir, 2)
    assert len(round_two) == 3 and all(int(r["id"]) in later for r in round_two)
    assert all(r["label"] == GOLD[r["text"]] and r["labelled_by"] == "label-studio user 7" for r in round_two)
    assert all(state.labelled[int(r["id"])] == LABELS.index(GOLD[r["text"]]) for r in round_two)


def test_deleted_updated_and_skipped_annotations_of_the_pending_round(run_dir):
    backend, client = backend_for(run_dir, LabellingSettings(grace_seconds=600, estimate_folds=0))
    first, second, third = pending(run_dir)
    assert annotate(client, backend, first, "bug") == "labelled"
    assert annotate(client, backend, first, "question", "ANNOTATION_UPDATED") == "corrected"
    assert annotate(client, backend, second, None) == "skipped"  # LS's "Skip": asked again at the end
    assert [int(r["id"]) for r in queries(run_dir, 1)] == [first, third, second]
    deleted = client.post(
        "webhook", json={"action": "ANNOTATIONS_DELETED", "annotations": [{"id": 9000 + first}], "project": PROJECT}
    )
    assert (deleted.status_code, deleted.json()["result"]) == (201, ["cleared"])
    assert all(not r["label"] for r in queries(run_dir, 1))
    assert history(run_dir) == [
        ("label", first, "label-studio user 7"),
        ("edit", first, "label-studio user 7"),
        ("skip", second, "label-studio user 7"),
        ("undo", first, "label-studio"),
    ]
    # "Start Training" before the round is labelled says what it waits for; once labelled (the grace period running)
    # it trains at once. Other actions are answered and ignored.
    refused = client.post("train", json={"annotations": [], "project": "3.1", "label_config": LABEL_CONFIG})
    assert refused.status_code == 409
    assert refused.json()["error"].startswith("round 1 has 3 of its 3 queried texts without a label")
    for row in (first, second, third):
        annotate(client, backend, row, "gold", annotation_id=100 + row)
    assert backend.session.phase == "scheduled"
    ignored = client.post("webhook", json={"action": "PROJECT_UPDATED", "project": PROJECT})
    assert (ignored.status_code, ignored.json()["status"]) == (200, "ignored")
    started = client.post("webhook", json={"action": "START_TRAINING", "project": PROJECT})
    assert (started.status_code, started.json()["result"]) == (201, "round 1 trains now")
    settle(backend.session)
    assert len(ArmState.load(f"{run_dir}/{ARM}").rounds) == 2


def test_a_restarted_backend_replays_its_store_and_loses_nothing(run_dir):
    backend, client = backend_for(run_dir)
    first, second, third = pending(run_dir)
    annotate(client, backend, first, "gold")
    annotate(client, backend, second, "gold")
    # Killed after the third annotation was recorded, before it reached the queries file; then a fourth event was
    # cut short in the middle of its line.
    event = {
        "event": "ANNOTATION_CREATED",
        "annotation": 9000 + third,
        "task": 500 + third,
        "row": third,
        "label": GOLD[backend.texts[third]],
        "skipped": False,
        "who": "label-studio user 8",
        "when": "2026-01-05T10:02:00.000Z",
    }
    with (Path(run_dir) / STORE).open("a") as f:
        f.write(json.dumps(event) + "\n" + '{"event": "ANNOTATION_UPD')
    assert sum(1 for r in queries(run_dir, 1) if r["label"]) == 2
    restarted = LabelStudioBackend(LabellingSession(run_dir, "label-studio", AT_ONCE))
    settle(restarted.session)
    # The replay labelled the third row and trained the round; the two labels applied before are not applied again.
    assert [(int(r["id"]), r["labelled_by"]) for r in queries(run_dir, 1)] == [
        (first, "label-studio user 7"),
        (second, "label-studio user 7"),
        (third, "label-studio user 8"),
    ]
    assert history(run_dir) == [
        ("label", first, "label-studio user 7"),
        ("label", second, "label-studio user 7"),
        ("label", third, "label-studio user 8"),
    ]
    assert len(ArmState.load(f"{run_dir}/{ARM}").rounds) == 2
    assert (Path(run_dir) / STORE).read_text().endswith("}\n") and len(
        (Path(run_dir) / STORE).read_text().splitlines()
    ) == 3
    LabelStudioBackend(LabellingSession(run_dir, "label-studio", AT_ONCE))  # and again: nothing changes
    assert len(history(run_dir)) == 3


def test_an_annotation_the_backend_missed_comes_with_label_studios_train_call(run_dir):
    """Label Studio's older "train" call carries every annotated task: what a stopped backend missed is applied
    (once), then the round trains."""
    backend, client = backend_for(run_dir, LabellingSettings(grace_seconds=600, estimate_folds=0))
    queried = pending(run_dir)
    for row in queried[:2]:
        annotate(client, backend, row, "gold")
    tasks = []
    for row in queried:
        event = annotation_event("ANNOTATION_CREATED", task(backend, row), GOLD[backend.texts[row]], 9000 + row)
        tasks.append(event["task"] | {"annotations": [event["annotation"]], "predictions": []})
    body = {"annotations": tasks, "project": "3.1767607200", "label_config": LABEL_CONFIG, "params": {}}
    response = client.post("train", json=body)
    assert (response.status_code, response.json()) == (201, {"status": "ok", "result": "round 1 trains now"})
    assert len((Path(run_dir) / STORE).read_text().splitlines()) == 3  # the two it had are not recorded again
    settle(backend.session)
    assert len(ArmState.load(f"{run_dir}/{ARM}").rounds) == 2
    assert [action for action, _, _ in history(run_dir)] == ["label"] * 3


@pytest.mark.server
def test_the_command_prints_the_url_to_paste_and_keeps_its_token_across_restarts(run_dir):
    port = free_port()
    command = [sys.executable, "-m", "st_contrastive.commands.cli", "label-studio-backend", run_dir]

    def start():
        process = subprocess.Popen(
            [*command, "--port", str(port), "--grace-seconds", "0", "--estimate-folds", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for line in process.stdout:  # after the log lines of the run's loading
            if "Connect Model, URL " in line:
                assert "URL http://127.0.0.1:" in line
                return process, line.split("URL ", 1)[1].split()[0]
        raise AssertionError("the backend printed no URL")

    process, url = start()
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                health = httpx.get(url + "/health", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.2)
        assert health.json()["model_version"] == "round-1"
        assert httpx.get(url.rsplit("/", 1)[0] + "/health").status_code == 401
        assert httpx.get(url + "/health", headers={"Origin": "http://127.0.0.1:8080"}).status_code == 403
    finally:
        process.kill()
        process.wait()
        process.stdout.close()
    token_file = Path(run_dir) / "label-studio-backend.token"
    assert token_file.stat().st_mode & 0o077 == 0  # the owner's alone
    process, again = start()
    process.kill()
    process.wait()
    process.stdout.close()
    assert again == url  # the URL Label Studio keeps (and its webhook's) still works
