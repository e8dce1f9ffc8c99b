"""The labelling page's screenshots in docs/scale.md, from a real run: TREC questions of five classes (ABBR, 1.5 % of
them, left out: a class with one labelled row allows no cross-validation) without a test split (so the page shows
its cross-validated estimate), all-MiniLM-L6-v2, 30 random questions then 30 acquired ones, `st-contrastive label` as a server process and a person
played by TREC's gold labels in headless Chromium (one label undone, one text ignored, one label corrected in the
review list).

    python docs/screenshots.py [--pool-size 300] [--output docs/images]

Writes labelling-review.png (the review list after round 1) and labelling-done.png (the end page with the
predictions). About 10 minutes on 2 CPU cores; needs Chromium (apt-get install chromium) and Playwright.
"""

from __future__ import annotations

import argparse
import csv
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


LABELS = ["DESC", "ENTY", "HUM", "LOC", "NUM"]


def user_file(path: Path, pool_size: int) -> dict[str, str]:
    """TREC's first ``pool_size`` questions of :data:`LABELS` as a person's CSV of unlabelled texts (no test split);
    returns each text's gold label."""
    from st_contrastive.data.text_classification import load_text_classification

    trec = load_text_classification("trec")
    gold = {
        text: trec.label_names[label]
        for text, label in zip(trec.train_texts, trec.train_labels, strict=True)
        if trec.label_names[label] in LABELS
    }
    gold = dict(list(gold.items())[:pool_size])
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["text", "label"])
        writer.writerows([text, ""] for text in gold)
    return gold


def main(argv: list[str] | None = None) -> None:
    from playwright.sync_api import expect, sync_playwright

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pool-size", type=int, default=300)
    parser.add_argument("--output", default=str(Path(__file__).parent / "images"))
    args = parser.parse_args(argv)

    folder = Path(tempfile.mkdtemp(prefix="labelling-screenshots-"))
    gold = user_file(folder / "questions.csv", args.pool_size)
    cli = [sys.executable, "-m", "st_contrastive.commands.cli"]
    run = folder / "run"
    subprocess.run(
        [*cli, "active", "--dataset", str(folder / "questions.csv"), "--label-names", *LABELS, "--oracle", "human"]
        + ["--initial", "0.1", "--step", "0.1", "--budget", "0.2", "--output", str(run)],
        check=True,
    )
    server = subprocess.Popen([*cli, "label", str(run), "--port", "0"], stdout=subprocess.PIPE, text=True)
    url = next(line for line in server.stdout if "open http" in line).split("open ", 1)[1].split()[0]
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
            page = browser.new_page(viewport={"width": 1000, "height": 900})
            page.goto(url)
            for round_number in (0, 1):
                progress = page.locator("#round-progress")
                expect(progress).to_contain_text(f"(round {round_number})", timeout=900_000)
                queried = int(progress.inner_text().split("/")[1].split()[0])
                for done in range(queried):
                    expect(progress).to_have_text(f"{done} / {queried} (round {round_number})")
                    text = page.locator("#text").inner_text()
                    key = "i" if (round_number, done) == (1, 0) else str(LABELS.index(gold[text]) + 1)
                    page.keyboard.press(key)  # round 1's first text ignored, the others labelled
                    if (round_number, done) == (0, 1):
                        expect(progress).to_have_text(f"2 / {queried} (round 0)")
                        page.keyboard.press("u")  # the second label undone, and given again
                        expect(page.locator("#notice")).to_contain_text("Undone")
                        page.keyboard.press(key)
                expect(page.locator("#scheduled")).to_be_visible()
                page.keyboard.press("t")
                if round_number == 0:
                    expect(progress).to_contain_text("(round 1)", timeout=900_000)
                    expect(page.locator("#curve circle")).to_have_count(1, timeout=900_000)  # round 0's estimate
                    page.locator("#review summary").click()
                    select = page.locator("#review-rows tr").first.locator("select")
                    given = select.input_value()
                    select.select_option(next(name for name in LABELS if name != given))
                    expect(page.locator("#notice")).to_contain_text("Changed")
                    page.screenshot(path=f"{args.output}/labelling-review.png", full_page=True)
                    select.select_option(given)  # corrected back: the history keeps both
                    expect(page.locator("#notice")).to_contain_text(f"is now {given}")
                    page.locator("#review summary").click()
            expect(page.locator("#done")).to_be_visible(timeout=900_000)
            expect(page.locator("#predictions-rows tr").first).to_be_visible(timeout=60_000)
            expect(page.locator("#curve circle")).to_have_count(2, timeout=900_000)
            page.screenshot(path=f"{args.output}/labelling-done.png", full_page=True)
            browser.close()
    finally:
        server.terminate()
        server.wait()
    print(f"screenshots in {args.output}; the run in {run}")


if __name__ == "__main__":
    main()
