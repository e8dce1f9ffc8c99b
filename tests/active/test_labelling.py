"""The labelling page's server in-process (FastAPI's TestClient over the real app, a real run with a tiny model):
label, undo, skip, the next round trained by the loop, export, and what it refuses (a bad label, a row not queried,
a stale round, a second label for a row, a request without the token)."""

import csv
import json
import threading
import time
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sentence_transformers import SentenceTransformer
from support_tickets import ARM, SUPPORT, copy_of_run, queries

from st_contrastive.active import ArmState
from st_contrastive.active.labelling import HISTORY, LabellingSession, labels_from_history
from st_contrastive.active.labelling_app import create_app
from st_contrastive.active.labelling_settings import LabellingSettings
from st_contrastive.commands.cli import main as cli_main
from st_contrastive.data.table_file import read_rows
from st_contrastive.models import LabelClassifier
from st_contrastive.scale.round_training import RoundModel

GOLD = {text: label for label, texts in SUPPORT.items() for text in texts}
# The runs' rounds train one epoch of a handful of rows: at least 2 steps, not the fixed 10 (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("short_rounds")


TOKEN = "s3cret"
AT_ONCE = LabellingSettings(grace_seconds=0, estimate_folds=0)  # a labelled round trains at its last label


def client_for(session: LabellingSession, **headers) -> TestClient:
    """The page's client: the token and the page's own origin on every request, as the page's fetch sends them."""
    app = create_app(session, TOKEN, frozenset({"testserver"}))
    return TestClient(app, headers={"X-Token": TOKEN, "Origin": "http://testserver"} | headers)


@pytest.fixture()
def run_dir(human_run, tmp_path):
    return copy_of_run(human_run, tmp_path)


def label_current(client, status) -> dict:
    item = status["item"]
    response = client.post("/api/label", json={"round": status["round"], "id": item["id"], "label": GOLD[item["text"]]})
    assert response.status_code == 200, response.text
    return response.json()


def test_the_queue_shows_the_file_labels_and_the_models_guess(run_dir):
    client = client_for(LabellingSession(run_dir, annotator="ana"))
    status = client.get("/api/status").json()
    assert (status["given"], status["round"], status["queried"], status["rounds_done"], status["rounds_total"]) == (
        6,
        1,
        3,
        1,
        3,
    )
    assert (status["labels_so_far"], status["labels_budget"], status["phase"]) == (6, 12, "labelling")
    first = queries(run_dir, 1)[0]
    assert status["item"]["id"] == int(first["id"]) and status["item"]["text"] == first["text"]
    model_dir = f"{run_dir}/{ARM}/model"  # the guess is round 0's saved model on that text
    probabilities = LabelClassifier.load(f"{model_dir}/classifier").predict_proba(
        SentenceTransformer(model_dir).encode([first["text"]])
    )[0]
    assert status["item"]["prediction"] == sorted(SUPPORT)[int(np.argmax(probabilities))]
    assert status["item"]["confidence"] == pytest.approx(float(probabilities.max()), abs=1e-3)
    assert status["curve"][0]["labelled"] == 6 and status["curve"][0]["accuracy"] is not None
    page = client.get("/").text
    assert "<script>" in page and "http" not in page.replace("http://www.w3.org/2000/svg", "")  # no external assets


def test_label_undo_skip_write_the_queries_file_at_once(run_dir):
    client = client_for(LabellingSession(run_dir, annotator="ana"))
    status = client.get("/api/status").json()
    first = status["item"]
    status = label_current(client, status)
    row = next(r for r in queries(run_dir, 1) if int(r["id"]) == first["id"])
    assert (row["label"], row["labelled_by"]) == (GOLD[first["text"]], "ana") and row["labelled_at"]
    assert (status["labelled_this_round"], status["labels_so_far"], status["item"]["position"]) == (1, 7, 2)

    second = status["item"]
    status = client.post("/api/skip", json={"round": 1, "id": second["id"]}).json()
    assert status["item"]["id"] != second["id"]
    assert int(queries(run_dir, 1)[-1]["id"]) == second["id"]  # skipped: asked again at the end

    third = status["item"]
    status = label_current(client, status)  # within a millisecond or two of the first label, maybe the same
    status = client.post("/api/undo", json={"round": 1}).json()
    assert status["item"]["id"] == third["id"] and status["labelled_this_round"] == 1
    assert status["undone"] == {"id": third["id"], "text": third["text"], "label": GOLD[third["text"]]}
    status = client.post("/api/undo", json={"round": 1}).json()
    assert status["item"]["id"] == first["id"] and status["labelled_this_round"] == 0
    assert all(not r["label"] for r in queries(run_dir, 1))
    assert client.post("/api/undo", json={"round": 1}).status_code == 409  # nothing left to undo
    # Every action is in the history, who and when; the labels it leaves standing are the file's (none now).
    history = [json.loads(line) for line in (Path(run_dir) / HISTORY).read_text().splitlines()]
    assert [(h["action"], h["id"]) for h in history] == [
        ("label", first["id"]),
        ("skip", second["id"]),
        ("label", third["id"]),
        ("undo", third["id"]),
        ("undo", first["id"]),
    ]
    assert {h["who"] for h in history} == {"ana"} and all(h["when"] for h in history)
    assert labels_from_history(run_dir) == {}
    label_current(client, client.get("/api/status").json())
    standing = {int(r["id"]): r["label"] for r in queries(run_dir, 1) if r["label"]}
    assert labels_from_history(run_dir) == standing and len(standing) == 1


def test_a_double_submit_is_applied_once_and_a_different_label_is_refused(run_dir):
    client = client_for(LabellingSession(run_dir))
    status = client.get("/api/status").json()
    item, label = status["item"], GOLD[status["item"]["text"]]
    request = {"round": 1, "id": item["id"], "label": label}
    assert client.post("/api/label", json=request).status_code == 200
    again = client.post("/api/label", json=request)  # a double click, or a second tab
    assert again.status_code == 200 and again.json()["labelled_this_round"] == 1
    other = next(name for name in SUPPORT if name != label)
    refused = client.post("/api/label", json=request | {"label": other})
    assert refused.status_code == 409 and f"labelled {label!r} already" in refused.json()["error"]
    assert sum(1 for r in queries(run_dir, 1) if r["label"]) == 1


@pytest.mark.parametrize(
    ("change", "status_code", "message"),
    [
        (
            {"label": "refund"},
            400,
            "unknown label 'refund'; expected one of ['billing', 'bug', 'question'] or (ignored)",
        ),
        ({"id": 10_000}, 400, "row 10000 was not queried in round 1"),
        ({"round": 0}, 409, "round 0 is over; the run waits for the labels of round 1"),
    ],
)
def test_bad_requests_are_refused_and_change_nothing(run_dir, change, status_code, message):
    client = client_for(LabellingSession(run_dir))
    item = client.get("/api/status").json()["item"]
    before = queries(run_dir, 1)
    response = client.post("/api/label", json={"round": 1, "id": item["id"], "label": "bug"} | change)
    assert (response.status_code, response.json()["error"]) == (status_code, message)
    assert queries(run_dir, 1) == before


def test_nobody_else_in_token_host_origin_and_size_are_checked(run_dir):
    """As Jupyter guards its server: a token always, traded for an HttpOnly SameSite=Strict cookie and dropped from
    the URL; the Host this server is reached by; the page's own origin for anything that changes labels; a bounded
    body; and headers that forbid other scripts and frames."""
    session = LabellingSession(run_dir, annotator="ana")
    anyone = TestClient(create_app(session, TOKEN, frozenset({"testserver"})))
    assert anyone.get("/api/status").status_code == 403  # no token
    assert anyone.get("/api/status", headers={"X-Token": "wrong"}).status_code == 403
    first = anyone.get(f"/?token={TOKEN}", follow_redirects=False)
    assert first.status_code == 303 and first.headers["location"] == "/"  # the token leaves the address bar
    cookie = first.headers["set-cookie"]
    assert f"st_contrastive_token={TOKEN}" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert anyone.get("/").status_code == 200 and anyone.get("/api/status").status_code == 200  # by the cookie
    # DNS rebinding: a page of another site that resolves to 127.0.0.1 names its own host.
    assert anyone.get("/api/status", headers={"Host": "attacker.example"}).status_code == 403
    item = anyone.get("/api/status").json()["item"]
    label = {"round": 1, "id": item["id"], "label": GOLD[item["text"]]}
    before = queries(run_dir, 1)
    assert anyone.post("/api/label", json=label).status_code == 403  # no Origin: not from the page
    assert anyone.post("/api/label", json=label, headers={"Origin": "http://attacker.example"}).status_code == 403
    oversize = {**label, "label": "x" * 20_000}
    assert anyone.post("/api/label", json=oversize, headers={"Origin": "http://testserver"}).status_code == 413
    too_long = {**label, "label": "x" * 500}
    assert anyone.post("/api/label", json=too_long, headers={"Origin": "http://testserver"}).status_code == 422
    assert queries(run_dir, 1) == before  # nothing refused changed the file
    assert anyone.post("/api/label", json=label, headers={"Sec-Fetch-Site": "same-origin"}).status_code == 200
    page = anyone.get("/")
    policy = page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy and "script-src 'sha256-" in policy and "unsafe" not in policy
    assert page.headers["x-frame-options"] == "DENY"


def test_a_labelled_round_trains_the_next_then_the_budget_exports_every_label_and_predicts_every_row(run_dir):
    session = LabellingSession(run_dir, annotator="ana", settings=AT_ONCE)
    client = client_for(session)
    for round_number in (1, 2):
        status = client.get("/api/status").json()
        assert status["round"] == round_number
        for _ in range(status["queried"]):
            status = label_current(client, status)
        assert status["phase"] == "training" and status["item"] is None
        assert client.post("/api/undo", json={"round": round_number}).status_code == 409  # it trains on them now
        session.wait()
    status = client.get("/api/status").json()
    assert status["phase"] == "done" and status["rounds_done"] == 3 and status["round"] is None
    assert [point["labelled"] for point in status["curve"]] == [6, 9, 12]
    assert all(point["accuracy"] is not None for point in status["curve"])
    assert status["commands"] == [
        f"st-contrastive evaluate {run_dir}/{ARM}/model",
        f"st-contrastive push {run_dir}/{ARM}/model --repo-id USER/NAME",
    ]
    state = ArmState.load(f"{run_dir}/{ARM}")
    assert {i: label for i, label in state.labelled.items()} and len(state.labelled) == 12

    response = client.get("/api/export")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(response.text.splitlines()))
    assert len(rows) == 12 and list(rows[0]) == ["id", "text", "label", "round", "labelled_by", "labelled_at"]
    assert all(GOLD[row["text"]] == row["label"] for row in rows)
    assert sorted(row["round"] for row in rows) == ["0"] * 6 + ["1"] * 3 + ["2"] * 3
    assert {row["labelled_by"] for row in rows if row["round"] != "0"} == {"ana"}
    with open(f"{run_dir}/summary.json") as f:  # the command line's reports, at the budget
        summary = json.load(f)
    assert [row["labelled"] for row in summary] == [6, 9, 12]
    # What a person labelling 12 of 18 texts came for: the model's label for every row, next to the labels.
    assert status["predictions"]
    predictions = read_rows(f"{run_dir}/predictions.csv")
    assert [int(row["id"]) for row in predictions] == list(range(18))
    assert {int(row["id"]): row["label"] for row in predictions if row["label"]} == {
        int(row["id"]): row["label"] for row in rows
    }
    model = RoundModel.load(f"{run_dir}/{ARM}/model")
    probabilities = model.proba([row["text"] for row in predictions])
    assert [row["predicted"] for row in predictions] == [model.classifier.labels[i] for i in probabilities.argmax(1)]
    assert [float(row["p(bug)"]) for row in predictions] == pytest.approx(probabilities[:, 1], abs=1e-4)
    preview = client.get("/api/predictions").json()
    assert (preview["rows"], preview["unlabelled"], sum(preview["per_label"].values())) == (18, 6, 18)
    sure = [row["probability"] for row in preview["least_sure"]]
    assert len(sure) == 6 and sure == sorted(sure)  # fewer than the 20 shown
    assert client.get("/api/predictions.csv").text.splitlines()[0].startswith("id,text,label,predicted,probability")


def test_a_run_that_is_not_a_human_oracle_run_is_refused_in_one_line(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "config.json").write_text(json.dumps({"dataset": "trec", "oracle": "simulated"}))
    with pytest.raises(SystemExit) as raised:
        cli_main(["label", str(tmp_path / "run")])
    assert raised.value.code == 2
    with pytest.raises(SystemExit):
        cli_main(["label", str(tmp_path / "absent")])


def client_as(session: LabellingSession, name: str | None) -> TestClient:
    """A person's page on a server for several people (``ask_names``): their name in each request, URL-encoded."""
    headers = {"X-Token": TOKEN, "Origin": "http://testserver"} | ({"X-Annotator": quote(name)} if name else {})
    return TestClient(create_app(session, TOKEN, frozenset({"testserver"}), ask_names=True), headers=headers)


def test_the_last_label_waits_its_grace_period_for_an_undo_or_train_now(run_dir):
    session = LabellingSession(run_dir, annotator="ana", settings=LabellingSettings(grace_seconds=600))
    client = client_for(session)
    status = client.get("/api/status").json()
    for _ in range(3):
        last, status = status["item"], label_current(client, status)
    assert status["phase"] == "scheduled" and 590 < status["train_in_seconds"] <= 600 and status["can_undo"]
    assert client.post("/api/skip", json={"round": 1, "id": last["id"]}).status_code == 409
    status = client.post("/api/undo", json={"round": 1}).json()  # the last label, undone before the round trains
    assert (status["phase"], status["labelled_this_round"], status["undone"]["id"]) == ("labelling", 2, last["id"])
    assert status["item"]["id"] == last["id"]
    status = label_current(client, status)
    assert status["phase"] == "scheduled"
    status = client.post("/api/train-now").json()
    assert status["phase"] == "training"
    session.wait()
    status = client.get("/api/status").json()
    assert (status["phase"], status["round"]) == ("labelling", 2)
    assert client.post("/api/train-now").status_code == 409  # nothing waits to train
    session.settings = LabellingSettings(grace_seconds=0.3)
    for _ in range(3):
        status = label_current(client, status)
    assert status["phase"] == "scheduled"
    deadline = time.monotonic() + 30
    while client.get("/api/status").json()["phase"] == "scheduled":  # the grace period ends by itself
        assert time.monotonic() < deadline
        time.sleep(0.05)
    session.wait()
    assert client.get("/api/status").json()["phase"] == "done"


def test_two_people_get_different_texts_and_each_undoes_only_their_own_label(run_dir):
    session = LabellingSession(run_dir, settings=LabellingSettings(grace_seconds=600))
    nameless, ana, bo = client_as(session, None), client_as(session, "Ana"), client_as(session, "Bó Ørsted")
    status = nameless.get("/api/status").json()
    assert status["ask_name"] and status["item"] is None  # the page asks for a name first
    assert nameless.post("/api/undo", json={"round": 1}).json()["error"].startswith("tell the page your name")
    assert client_as(session, "x" * 61).get("/api/status").status_code == 400
    a, b = ana.get("/api/status").json(), bo.get("/api/status").json()
    assert a["item"]["id"] != b["item"]["id"]  # each person has their own text
    label_current(ana, a)
    label_current(bo, b)  # Bó's label is the round's last so far
    undone = ana.post("/api/undo", json={"round": 1}).json()["undone"]
    assert undone["id"] == a["item"]["id"]  # Ana's own, not the last one given
    rows = {int(row["id"]): row for row in queries(run_dir, 1)}
    assert rows[b["item"]["id"]]["labelled_by"] == "Bó Ørsted" and not rows[a["item"]["id"]]["label"]
    assert ana.post("/api/undo", json={"round": 1}).status_code == 409  # nothing of Ana's left to undo
    history = [json.loads(line) for line in (Path(run_dir) / HISTORY).read_text().splitlines()]
    assert [(h["action"], h["who"]) for h in history] == [("label", "Ana"), ("label", "Bó Ørsted"), ("undo", "Ana")]


def test_an_ignored_text_is_never_trained_on_nor_asked_again(run_dir):
    session = LabellingSession(run_dir, annotator="ana", settings=AT_ONCE)
    client = client_for(session)
    status = client.get("/api/status").json()
    ignored = status["item"]["id"]
    status = client.post("/api/ignore", json={"round": 1, "id": ignored}).json()
    assert next(row["label"] for row in queries(run_dir, 1) if int(row["id"]) == ignored) == "(ignored)"
    while status["item"]:
        status = label_current(client, status)
    session.wait()
    state = ArmState.load(f"{run_dir}/{ARM}")
    assert state.ignored == [ignored] and ignored not in state.labelled and len(state.labelled) == 8
    status = client.get("/api/status").json()
    assert (status["round"], status["queried"]) == (2, 4)  # 12 labels at round 2: one more asked
    assert ignored not in [int(row["id"]) for row in queries(run_dir, 2)]
    assert labels_from_history(run_dir)[ignored] == "(ignored)"


def test_the_review_list_shows_every_label_and_a_correction_counts_from_the_next_round(run_dir, monkeypatch):
    from st_contrastive.active import loop

    session = LabellingSession(run_dir, annotator="ana", settings=AT_ONCE)
    client = client_for(session)
    status = client.get("/api/status").json()
    first = status["item"]
    right = GOLD[first["text"]]
    wrong = next(name for name in sorted(SUPPORT) if name != right)
    status = client.post("/api/label", json={"round": 1, "id": first["id"], "label": wrong}).json()
    review = client.get("/api/review").json()
    assert {k: review[0][k] for k in ("id", "text", "label", "round", "who", "editable")} == {
        "id": first["id"],
        "text": first["text"],
        "label": wrong,
        "round": 1,
        "who": "ana",
        "editable": True,
    }
    assert len(review) == 7 and [row["who"] for row in review[1:]] == ["your file"] * 6
    refused = client.post("/api/edit", json={"id": review[1]["id"], "label": "bug"})
    assert refused.status_code == 400 and "change it in that file" in refused.json()["error"]
    while status["item"]:
        status = label_current(client, status)
    session.wait()
    assert ArmState.load(f"{run_dir}/{ARM}").labelled[first["id"]] == sorted(SUPPORT).index(wrong)
    # Corrected after round 1 trained on it: what round 2 trains on, round 1's file and the history say so.
    client.post("/api/edit", json={"id": first["id"], "label": right})
    assert ArmState.load(f"{run_dir}/{ARM}").labelled[first["id"]] == sorted(SUPPORT).index(right)
    assert next(row for row in queries(run_dir, 1) if int(row["id"]) == first["id"])["label"] == right
    assert labels_from_history(run_dir)[first["id"]] == right
    # A correction given while a round trains is applied when it is done (the loop owns the state until then).
    gate, real = threading.Event(), loop.run_active_learning
    monkeypatch.setattr(loop, "run_active_learning", lambda *args, **kwargs: gate.wait() and real(*args, **kwargs))
    status = client.get("/api/status").json()
    while status["item"]:
        status = label_current(client, status)
    assert status["phase"] == "training"
    assert client.post("/api/edit", json={"id": first["id"], "label": wrong}).status_code == 200
    assert ArmState.load(f"{run_dir}/{ARM}").labelled[first["id"]] == sorted(SUPPORT).index(right)
    gate.set()
    session.wait()
    state = ArmState.load(f"{run_dir}/{ARM}")
    assert state.labelled[first["id"]] == sorted(SUPPORT).index(wrong) and state.phase == "done"


def test_predictions_for_every_row_on_demand(run_dir):
    client = client_for(LabellingSession(run_dir, annotator="ana"))
    assert client.get("/api/predictions").status_code == 409  # none yet
    assert client.post("/api/predictions").status_code == 200
    preview = client.get("/api/predictions").json()
    assert (preview["rows"], preview["unlabelled"]) == (18, 12)
    assert client.get("/api/status").json()["predictions"]


def test_without_a_test_split_each_round_has_a_cross_validated_estimate(human_run_without_test_split, tmp_path):
    run_dir = copy_of_run(human_run_without_test_split, tmp_path)
    session = LabellingSession(run_dir, annotator="ana", settings=LabellingSettings(estimate_folds=2))
    session.wait()  # round 0's estimate, computed when the server starts (it had none)
    status = client_for(session).get("/api/status").json()
    assert not status["has_test_split"] and status["curve"][0]["accuracy"] is None
    estimate = status["curve"][0]["estimate"]
    assert (estimate["folds"], estimate["labelled"]) == (2, 6) and 0 <= estimate["accuracy"] <= 100
    assert json.loads((Path(run_dir) / ARM / "accuracy-estimates.json").read_text()) == {"0": estimate}
