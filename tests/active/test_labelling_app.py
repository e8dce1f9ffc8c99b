"""The labelling page as a person uses it: `st-contrastive label` as a real server process, driven by headless
Chromium (the system's, through Playwright) with the keyboard; and the server killed mid-round, which loses no
label and comes back at the same place in the queue."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from labelling_server import Server
from support_tickets import ARM, SUPPORT, copy_of_run, queries

from st_contrastive.active import ArmState
from st_contrastive.active.labelling import HISTORY

pytestmark = pytest.mark.server

GOLD = {text: label for label, texts in SUPPORT.items() for text in texts}
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture()
def run_dir(human_run, tmp_path):
    return copy_of_run(human_run, tmp_path)


@pytest.fixture()
def server(run_dir):
    server = Server(run_dir, GOLD)
    yield server
    server.kill()


def test_killing_the_server_mid_round_loses_no_label_and_keeps_the_place(server, run_dir):
    first, second = server.label_current(), server.label_current()
    position = server.status()["item"]
    server.kill()  # SIGKILL: no handler runs, nothing is flushed on the way out
    rows = {int(row["id"]): row for row in queries(run_dir, 1)}
    assert (rows[first["id"]]["label"], rows[second["id"]]["label"]) == (GOLD[first["text"]], GOLD[second["text"]])
    server.start()
    status = server.status()
    assert (status["round"], status["labelled_this_round"], status["labels_so_far"]) == (1, 2, 8)
    assert (status["item"]["id"], status["item"]["position"]) == (position["id"], 3)


def wait_for(marker, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not marker.exists():
        assert time.monotonic() < deadline, f"the fault was not reached in {timeout} s"
        time.sleep(0.05)


def round_one_labels(run_dir) -> list[tuple[int, str]]:
    return [(int(row["id"]), row["label"]) for row in queries(run_dir, 1)]


def history_actions(run_dir) -> list[tuple[str, int]]:
    lines = (Path(run_dir) / HISTORY).read_text().splitlines()
    return [(entry["action"], entry["id"]) for entry in map(json.loads, lines)]


def assert_round_two_comes_with_every_label_once(server, run_dir, labelled) -> None:
    """After a restart: the round that was stopped is done, round 2's queries come, round 1's labels are the
    same, once each (the state trained on 6 + 3 labels, the history holds the three labels and nothing more)."""
    status = server.after_training()
    assert (status["phase"], status["round"], status["labels_so_far"]) == ("labelling", 2, 9)
    assert round_one_labels(run_dir) == labelled and all(label for _, label in labelled)
    state = ArmState.load(f"{run_dir}/{ARM}")
    assert state.rounds[-1]["labelled"] == 9 and len(state.labelled) == 9 and state.phase == "labelling"
    assert sorted(history_actions(run_dir)) == sorted(("label", i) for i, _ in labelled)


@pytest.mark.parametrize("phase", ["training", "evaluating", "acquiring"])
def test_a_server_killed_while_a_round_trains_evaluates_or_acquires_goes_on_from_there(run_dir, tmp_path, phase):
    """The last label of a round starts it in the background; a SIGKILL while it trains, evaluates or acquires (the
    real loop held at that phase) must not leave the run stuck: the state names the phase, the restarted server
    goes on from it, and round 2's queries come with no label lost or doubled."""
    marker = tmp_path / "reached"
    server = Server(run_dir, GOLD, fault=f"pause-{phase}", marker=marker)
    try:
        assert server.label_queue()["phase"] == "training"
        wait_for(marker)
        server.kill()
        labelled = round_one_labels(run_dir)
        assert ArmState.load(f"{run_dir}/{ARM}").phase == phase
        server.start()
        assert_round_two_comes_with_every_label_once(server, run_dir, labelled)
    finally:
        server.kill()


def test_a_server_killed_in_the_grace_period_trains_the_round_on_restart(run_dir):
    """Killed after the round's last label, before its grace period is over: the labels are in the file, and the
    restarted server trains the round at once."""
    server = Server(run_dir, GOLD, grace_seconds=600)
    try:
        status = server.label_queue()
        assert status["phase"] == "scheduled" and status["train_in_seconds"] > 500
        server.kill()
        labelled = round_one_labels(run_dir)
        assert ArmState.load(f"{run_dir}/{ARM}").phase == "labelling"  # nothing trained yet
        server.start()
        assert_round_two_comes_with_every_label_once(server, run_dir, labelled)
    finally:
        server.kill()


def test_a_failed_round_shows_its_error_and_the_retry_button_trains_it(run_dir, tmp_path):
    marker = tmp_path / "failed"
    server = Server(run_dir, GOLD, fault="fail-training-once", marker=marker)
    try:
        server.label_queue()
        status = server.after_training()
        assert status["phase"] == "failed" and "RuntimeError: CUDA out of memory" in status["error"]
        labelled = round_one_labels(run_dir)
        assert (
            server.client.post(server.url + "api/label", json={"round": 1, "id": 0, "label": "bug"}).status_code == 409
        )
        response = server.client.post(server.url + "api/retry")
        assert response.status_code == 200 and response.json()["phase"] == "training"
        assert_round_two_comes_with_every_label_once(server, run_dir, labelled)
    finally:
        server.kill()


def test_a_second_writer_on_a_served_run_is_refused_in_one_line(server, run_dir):
    """Two servers on one run lost acknowledged labels; now the second one, or the command line resuming the run, is
    refused naming the process that holds it, and the first goes on."""
    for argv in (["label", run_dir, "--port", "0"], ["active", "--resume-from-checkpoint", run_dir]):
        done = subprocess.run(
            [sys.executable, "-m", "st_contrastive.commands.cli", *argv],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 1 and len(lines) == 1, done.stderr
        assert f"is in use by process {server.process.pid} (" in lines[0] and "Traceback" not in done.stderr
    server.label_current()  # the first server still labels
    assert server.status()["labelled_this_round"] == 1


def test_the_running_server_refuses_requests_from_anywhere_but_its_page(server, run_dir):
    """What another site, another account or a rebinding DNS name can send to the real server (uvicorn, not a
    test client), each refused before it changes anything: the cross-site form post a browser sends without a
    preflight (text/plain, a foreign Origin), a foreign Host, no token, an oversized body."""
    item = server.status()["item"]
    label = json.dumps({"round": 1, "id": item["id"], "label": GOLD[item["text"]]})
    token = server.page_url.split("token=", 1)[1]
    before = queries(run_dir, 1)
    cross_site_form = {"Content-Type": "text/plain", "Origin": "http://attacker.example", "X-Token": token}
    refusals = {
        "cross-site form": httpx.post(server.url + "api/label", content=label, headers=cross_site_form),
        "no Origin": httpx.post(server.url + "api/label", content=label, headers={"X-Token": token}),
        "foreign Host": httpx.get(server.url + "api/status", headers={"Host": "attacker.example", "X-Token": token}),
        "no token": httpx.get(server.url + "api/status"),
        "wrong token": httpx.get(server.url + "api/status", headers={"X-Token": token[:-1]}),
        "oversize": server.client.post(server.url + "api/label", content=b"x" * 50_000_000),
    }
    assert {name: response.status_code for name, response in refusals.items()} == {
        "cross-site form": 403,
        "no Origin": 403,
        "foreign Host": 403,
        "no token": 403,
        "wrong token": 403,
        "oversize": 413,
    }
    assert queries(run_dir, 1) == before and server.status()["labelled_this_round"] == 0


def test_a_person_labels_in_chromium_undoes_ignores_corrects_and_gets_predictions_after_a_kill(run_dir, tmp_path):
    """The page in headless Chromium, by keyboard and mouse: a label, its undo (naming the text), an ignored text,
    the round's grace period cut short with "train now", a correction in the review list, then the server killed
    while the last round trains and started again: the page (opened at the new URL) shows the round finish and the
    predictions for every row. Screenshots go to $SCREENSHOTS (the docs' images) or the test's folder."""
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail(f"no Chromium at {CHROMIUM}: .ci/run installs it (apt-get install chromium)")
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import expect, sync_playwright

    shots = Path(os.environ.get("SCREENSHOTS", tmp_path))
    labels = sorted(SUPPORT)
    server = Server(run_dir, GOLD, grace_seconds=600)

    def press_gold(page) -> str:
        text = page.locator("#text").inner_text()
        page.keyboard.press(str(labels.index(GOLD[text]) + 1))
        return text

    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
            page = browser.new_page(viewport={"width": 1000, "height": 900})
            page.goto(server.page_url)
            expect(page.locator("#round-progress")).to_have_text("0 / 3 (round 1)")
            expect(page.locator("#given")).to_contain_text("6 rows of your file had labels")
            expect(page.locator("#prediction")).to_contain_text("The current model guesses")
            first = press_gold(page)
            expect(page.locator("#round-progress")).to_have_text("1 / 3 (round 1)")
            page.keyboard.press("u")
            expect(page.locator("#notice")).to_contain_text(f"Undone: “{first}” is no longer {GOLD[first]}")
            expect(page.locator("#text")).to_have_text(first)
            press_gold(page)
            expect(page.locator("#round-progress")).to_have_text("1 / 3 (round 1)")
            ignored = page.locator("#text").inner_text()
            page.keyboard.press("i")
            expect(page.locator("#round-progress")).to_have_text("2 / 3 (round 1)")
            press_gold(page)
            expect(page.locator("#scheduled")).to_be_visible()  # the grace period: undo, or train now
            expect(page.locator("#scheduled")).to_contain_text("It trains in")
            page.keyboard.press("t")
            expect(page.locator("#round-progress")).to_have_text("0 / 4 (round 2)", timeout=120_000)
            expect(page.locator("#curve circle")).to_have_count(2)  # test accuracy after rounds 0 and 1
            # The review list: every label so far; a label of round 1 corrected to another one.
            page.locator("#review summary").click()
            row = page.locator("#review-rows tr", has_text=first)
            other = next(name for name in labels if name != GOLD[first])
            row.locator("select").select_option(other)
            expect(page.locator("#notice")).to_contain_text(f"is now {other}")
            expect(page.locator("#review-rows tr", has_text=ignored).locator("select")).to_have_value("(ignored)")
            page.screenshot(path=str(shots / "labelling-review.png"), full_page=True)
            # Round 2's four texts, then the server killed while the round trains; the person opens the new URL.
            server.kill()
            marker = tmp_path / "training"
            server.start("pause-training", marker)
            page.goto(server.page_url)
            for done in range(4):
                expect(page.locator("#round-progress")).to_have_text(f"{done} / 4 (round 2)")
                press_gold(page)
            expect(page.locator("#scheduled")).to_be_visible()
            page.keyboard.press("t")
            expect(page.locator("#training")).to_be_visible()
            wait_for(marker)
            server.kill()
            server.start()
            page.goto(server.page_url)
            expect(page.locator("#done")).to_be_visible(timeout=120_000)
            expect(page.locator("#predictions-summary")).to_contain_text("18 rows, 5 of them without a label")
            expect(page.locator("#predictions-rows tr")).to_have_count(5)
            page.screenshot(path=str(shots / "labelling-done.png"), full_page=True)
            browser.close()
    finally:
        server.kill()
    state = ArmState.load(f"{run_dir}/{ARM}")
    assert state.phase == "done" and len(state.labelled) == 12 and len(state.ignored) == 1
    corrected = next(row for row in queries(run_dir, 1) if row["text"] == first)
    assert corrected["label"] == other and state.labelled[int(corrected["id"])] == labels.index(other)
    assert all(row["label"] == GOLD[row["text"]] and row["labelled_by"] == "ana" for row in queries(run_dir, 2))
