"""The labelling page's server in-process (FastAPI's TestClient over the real app, a real run with a tiny model):
label, undo, skip, the next round trained by the loop, export, and what it refuses (a bad label, a row not queried,
a stale round, a second label for a row, a request without the token)."""

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sentence_transformers import SentenceTransformer
from support_tickets import ARM, SUPPORT, copy_of_run, queries

from st_contrastive.active import ArmState
from st_contrastive.active.labelling import HISTORY, LabellingSession, labels_from_history
from st_contrastive.active.labelling_app import create_app
from st_contrastive.commands.cli import main as cli_main
from st_contrastive.models import LabelClassifier

GOLD = {text: label for label, texts in SUPPORT.items() for text in texts}


TOKEN = "s3cret"


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
    standing = {(1, int(r["id"])): r["label"] for r in queries(run_dir, 1) if r["label"]}
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
        ({"label": "refund"}, 400, "unknown label 'refund'; expected one of ['billing', 'bug', 'question']"),
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


def test_a_labelled_round_trains_the_next_then_the_budget_exports_every_label(run_dir):
    session = LabellingSession(run_dir, annotator="ana")
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


def test_a_run_that_is_not_a_human_oracle_run_is_refused_in_one_line(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "config.json").write_text(json.dumps({"dataset": "trec", "oracle": "simulated"}))
    with pytest.raises(SystemExit) as raised:
        cli_main(["label", str(tmp_path / "run")])
    assert raised.value.code == 2
    with pytest.raises(SystemExit):
        cli_main(["label", str(tmp_path / "absent")])
