"""The screenshots of "SCALe inside Label Studio" in docs/scale.md, from the real Label Studio (1.23.2, in
.venv-label-studio: make label-studio-venv) in headless Chromium: a human-oracle run on 60 TREC questions of three
classes (6 with their label, 15 held out as the test split) with all-MiniLM-L6-v2 at the default round settings,
its tasks exported with `st-contrastive label-studio-export` and imported into a new project, `st-contrastive
label-studio-backend` connected as the project's model, round 1's queries labelled through label-studio-sdk with
TREC's gold labels (as a person's clicks would), round 1 trained and the predictions retrieved again; then the
person logs in and looks:

- label-studio-data-manager.png: the Data Manager sorted by "Prediction score", ascending: round 2's queries first,
  in SCALe's order, with each task's predicted label, score and model version (round-2);
- label-studio-labelling.png: "Label All Tasks" in that tab: the first of them, with the model's label chosen;
- label-studio-model.png: Settings > Model, the backend connected.

Run by hand from the checkout (about 5 minutes on 2 CPU cores; needs Chromium, apt-get install chromium):

    .venv/bin/python tests/label_studio/screenshots.py [--output docs/images] [--per-class 20]
"""

from __future__ import annotations

import argparse
import csv
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' support modules

from label_studio_server import Backend, LabelStudio
from trec_questions import write_trec_questions

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
VIEWPORT = {"width": 1280, "height": 800}
# The Data Manager's columns that say nothing here (hidden in the view the screenshot shows).
HIDDEN = [
    "tasks:inner_id",
    "tasks:completed_at",
    "tasks:cancelled_annotations",
    "tasks:total_predictions",
    "tasks:annotators",
    "tasks:annotations_results",
    "tasks:annotations_ids",
    "tasks:file_upload",
    "tasks:storage_filename",
    "tasks:created_at",
    "tasks:updated_at",
    "tasks:updated_by",
    "tasks:avg_lead_time",
    "tasks:draft_exists",
    "tasks:predictions_results",
    "tasks:data.row",
]


def start_run(folder: Path, per_class: int) -> tuple[str, dict[str, str]]:
    """The run (its first round trained, round 1's queries waiting) and each question's gold label."""
    gold = write_trec_questions(folder / "questions.csv", per_class, labelled_per_class=2, test_per_class=5)
    run = folder / "run"
    cli = [sys.executable, "-m", "st_contrastive.commands.cli"]
    subprocess.run(
        [*cli, "active", "--dataset", str(folder / "questions.csv"), "--oracle", "human", "--objective", "supcon-ce"]
        + ["--step", "0.25", "--budget", "0.5", "--output", str(run)],
        check=True,
    )
    subprocess.run([*cli, "label-studio-export", str(run), "--output", str(folder / "tasks.json")], check=True)
    return str(run), gold


def shrink_png(path: Path) -> None:
    """256 colours, optimised: a tenth of the bytes, and the screenshot reads the same."""
    from PIL import Image

    with Image.open(path) as image:
        image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)


def main(argv: list[str] | None = None) -> None:
    from playwright.sync_api import expect, sync_playwright

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", default=str(ROOT / "docs" / "images"))
    parser.add_argument("--per-class", type=int, default=20, help="TREC questions of each class in the run's file")
    args = parser.parse_args(argv)
    output = Path(args.output)
    output.mkdir(parents=True, exist_ok=True)

    folder = Path(tempfile.mkdtemp(prefix="label-studio-screenshots-"))
    studio = LabelStudio(folder / "label-studio")  # migrates its database while the run's first round trains
    backend = None
    try:
        run, gold = start_run(folder, args.per_class)
        studio.wait()
        project = studio.sdk(
            "create-project",
            title="TREC questions",
            label_config=(folder / "tasks.label-config.xml").read_text(),
            tasks_file=str(folder / "tasks.json"),
        )["project"]
        backend = Backend(run, folder / "backend.log")
        url = backend.start()
        studio.sdk("connect-model", project=project, url=url)
        studio.sdk("prelabel-with-model", project=project)
        studio.sdk("retrieve-predictions", project=project)
        # Round 1's queries labelled as the person would, in SCALe's order; round 1 trains.
        task_of = {task["row"]: task for task in studio.sdk("tasks", project=project)}
        with open(next(Path(run).glob("arms/*/queries-round-001.csv")), newline="") as f:
            queried = [task_of[int(row["id"])] for row in csv.DictReader(f)]
        studio.sdk(
            "annotate", labels={task["id"]: gold[task["text"]] for task in queried}, from_name="label", to_name="text"
        )
        studio.sdk("wait-model-version", project=project, version="round-2", timeout=1800)
        studio.sdk("retrieve-predictions", project=project)
        view = studio.sdk(
            "create-view",
            project=project,
            title="SCALe's order",
            ordering=["tasks:predictions_score"],
            hidden=HIDDEN,
            widths={"tasks:data.text": 560, "tasks:predictions_model_versions": 200},
        )["id"]
        tasks = studio.sdk("tasks", project=project, ordering=["tasks:predictions_score"])

        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS)
            page = browser.new_page(viewport=VIEWPORT)
            # Offline: nothing but Label Studio itself (its pages name analytics and error-reporting hosts).
            page.route(
                "**/*", lambda route: route.continue_() if route.request.url.startswith(studio.url) else route.abort()
            )
            page.goto(f"{studio.url}/user/login/")
            page.fill("input[name=email]", studio.email)
            page.fill("input[name=password]", studio.password)
            page.click("button[type=submit]")
            page.wait_for_url(lambda url: "/user/login" not in url)

            page.goto(f"{studio.url}/projects/{project}/data?tab={view}")
            expect(page.get_by_text(tasks[0]["text"]).first).to_be_visible(timeout=60_000)
            page.wait_for_load_state("networkidle")
            page.screenshot(path=str(output / "label-studio-data-manager.png"))

            # Label All Tasks in that tab: the first query, with round-2's label chosen in advance.
            page.goto(f"{studio.url}/projects/{project}/data?tab={view}&labeling=1")
            expect(page.get_by_text(tasks[0]["text"]).first).to_be_visible(timeout=60_000)
            (suggested,) = [p["choices"][0] for p in tasks[0]["predictions"] if p["model_version"] == "round-2"]
            choice = page.locator("label").filter(has_text=re.compile(rf"^{suggested}")).locator("input")
            expect(choice).to_be_checked()
            page.wait_for_load_state("networkidle")
            page.screenshot(path=str(output / "label-studio-labelling.png"))

            page.goto(f"{studio.url}/projects/{project}/settings/ml")
            expect(page.get_by_text("Connected").first).to_be_visible(timeout=60_000)
            page.wait_for_load_state("networkidle")
            page.screenshot(path=str(output / "label-studio-model.png"))
            browser.close()
        for name in ("label-studio-data-manager.png", "label-studio-labelling.png", "label-studio-model.png"):
            shrink_png(output / name)
    finally:
        if backend:
            backend.kill()
        studio.stop()
    print(f"screenshots in {output}; the run and Label Studio's data in {folder}")


if __name__ == "__main__":
    main()
