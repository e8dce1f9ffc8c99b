"""The labelling page as a person uses it: `st-contrastive label` as a real server process, driven by headless
Chromium (the system's, through Playwright) with the keyboard; and the server killed mid-round, which loses no
label and comes back at the same place in the queue."""

import os
import shutil
import subprocess
import sys

import pytest
from labelling_server import Server
from support_tickets import ARM, SUPPORT, copy_of_run, queries

from st_contrastive.active import ArmState

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


def test_a_server_killed_while_the_next_round_trains_trains_it_again_on_restart(server, run_dir):
    """The last label of a round starts its training in the background; a kill then (no handler runs) must not
    leave the run stuck: the restarted server trains the round, and its queries come, no label lost or doubled."""
    status = server.status()
    while status["item"] is not None:
        item = status["item"]
        label = {"round": status["round"], "id": item["id"], "label": GOLD[item["text"]]}
        status = server.client.post(server.url + "api/label", json=label).json()
    # The answer to the last label: the round's training started under the session's lock, so this says so even when
    # a fast machine has finished it by now; the kill comes at once.
    assert status["phase"] == "training"
    server.kill()
    labelled = [row["label"] for row in queries(run_dir, 1)]
    assert len(labelled) == 3 and all(labelled)
    server.start()
    status = server.after_training()
    assert (status["phase"], status["round"], status["labels_so_far"]) == ("labelling", 2, 9)
    assert [row["label"] for row in queries(run_dir, 1)] == labelled  # the round's labels, once each
    assert ArmState.load(f"{run_dir}/{ARM}").rounds[-1]["labelled"] == 9


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


def test_a_round_labelled_by_keyboard_in_chromium_brings_the_next_rounds_queries(server, run_dir, tmp_path):
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail(f"no Chromium at {CHROMIUM}: .ci/run installs it (apt-get install chromium)")
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import expect, sync_playwright

    labels = sorted(SUPPORT)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        page = browser.new_page()
        page.goto(server.page_url)
        expect(page.locator("#round-progress")).to_have_text("0 / 3 (round 1)")
        expect(page.locator("#given")).to_contain_text("6 rows of your file had labels")
        expect(page.locator("#prediction")).to_contain_text("The current model guesses")
        for done in range(3):
            text = page.locator("#text").inner_text()
            page.keyboard.press(str(labels.index(GOLD[text]) + 1))
            if done < 2:
                expect(page.locator("#round-progress")).to_have_text(f"{done + 1} / 3 (round 1)")
        expect(page.locator("#training")).to_be_visible()  # the next round trains in the background
        expect(page.locator("#round-progress")).to_have_text("0 / 3 (round 2)", timeout=120_000)
        expect(page.locator("#card")).to_be_visible()
        expect(page.locator("#rounds")).to_have_text("2 / 3")
        expect(page.locator("#curve circle")).to_have_count(2)  # test accuracy after rounds 0 and 1
        page.screenshot(path=str(tmp_path / "labelling-page.png"), full_page=True)
        browser.close()
    state = ArmState.load(f"{run_dir}/{ARM}")
    assert state.pending.round == 2 and len(state.labelled) == 9
    assert all(row["label"] == GOLD[row["text"]] and row["labelled_by"] == "ana" for row in queries(run_dir, 1))
    assert all(not row["label"] for row in queries(run_dir, 2))
