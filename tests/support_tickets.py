"""A user's own support tickets, as the README's "your own data" example reads them: 18 texts in three classes,
and the person who labels the queries of an active-learning round."""

import contextlib
import csv

SUPPORT = {
    "billing": [
        "I was charged twice this month",
        "Please refund my last invoice",
        "My card was billed too much",
        "Why did my subscription price go up",
        "Cancel the extra charge on my account",
        "The invoice shows a fee I never agreed to",
    ],
    "bug": [
        "The app crashes when I open settings",
        "Saving a file gives error 500",
        "The export button does nothing",
        "Login page freezes after the update",
        "Images fail to load on the dashboard",
        "Search returns the wrong results since Monday",
    ],
    "question": [
        "How do I change my password",
        "Can I add a second user to my plan",
        "Where is the API key",
        "Is there a dark mode",
        "What file types can I upload",
        "Do you offer a student discount",
    ],
}


# Two labelled tickets per class that a user keeps aside to measure the model on (the file's "test" split).
HELD_OUT = {
    "billing": ["I got billed for a plan I cancelled", "Refund the double payment please"],
    "bug": ["The page goes blank when I click save", "Uploads stop at 99 percent"],
    "question": ["How do I invite my team", "Can I pay yearly instead"],
}


def write_support_csv(path, labelled_per_class: int, held_out: bool = False):
    """A user's file: the first ``labelled_per_class`` texts of each class carry their label, the rest none; with
    ``held_out`` also the :data:`HELD_OUT` tickets as the test split (a ``split`` column)."""
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["text", "label", "split"] if held_out else ["text", "label"])
        for label, texts in SUPPORT.items():
            writer.writerows(
                [text, label if k < labelled_per_class else ""] + (["train"] if held_out else [])
                for k, text in enumerate(texts)
            )
        if held_out:
            writer.writerows([text, label, "test"] for label, texts in HELD_OUT.items() for text in texts)


def fill(path, gold: dict[str, str], change=None):
    """Label a queries file as a person would, with the gold label names; ``change`` edits the rows first."""
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        row["label"] = gold[row["text"]]
    if change:
        rows = change(rows)
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["round", "id", "text", "label"])
        writer.writeheader()
        writer.writerows(rows)


ARM = "arms/ce-kmeans-seed0"  # the one arm of a human-oracle run with --objective ce


def start_human_run(folder, model, held_out: bool = True) -> str:
    """`active --oracle human` with ``model`` (a tiny one) on a file with 2 labelled tickets per class and a test
    split (unless not ``held_out``): round 0 trains on the 6 given labels and queries 3 of the 12 unlabelled ones
    (rounds of 6, 9, 12 labels), each one epoch long (at least 2 steps, as with the ``short_rounds`` fixture).
    Returns the run folder, ``folder/run``."""
    from st_contrastive.commands.cli import main as cli_main

    model.save(str(folder / "base"))
    write_support_csv(folder / "tickets.csv", labelled_per_class=2, held_out=held_out)
    output = folder / "run"
    with short_rounds():
        cli_main(human_run_command(folder / "tickets.csv", folder / "base", output))
    return str(output)


@contextlib.contextmanager
def short_rounds():
    """Rounds of at least 2 steps instead of the fixed 10 (``config.scale.MIN_STEPS``): a test's rounds on a handful
    of rows train their epochs alone; the same code, fewer steps. A patch of its own, which a test's
    ``monkeypatch.undo()`` leaves in place."""
    import pytest

    from st_contrastive.config import scale

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scale, "MIN_STEPS", 2)
        yield


def human_run_command(data, model, output) -> list[str]:
    """``st-contrastive active`` with a person labelling: CE rounds of one pass over a quarter of the pool each, up to
    half of it, on 4 rows a batch (a few seconds a round on the tiny model)."""
    return [
        *("active", "--dataset", str(data), "--model", str(model), "--objective", "ce", "--oracle", "human"),
        *("--step", "0.25", "--budget", "0.5", "--epochs", "1", "--from-base-epochs", "1"),
        *("--min-steps-per-class", "0", "--batch-size", "4", "--output", str(output)),
    ]


def copy_of_run(run_dir, folder) -> str:
    """A copy of a started run in ``folder`` (its base model and data file stay where they are, read-only): each
    test labels its own, and the run is trained once."""
    import shutil

    return str(shutil.copytree(run_dir, folder / "run"))


def queries(run_dir, round_number) -> list[dict]:
    """The rows of a round's queries file as the labelling page or a spreadsheet left them."""
    with open(f"{run_dir}/{ARM}/queries-round-{round_number:03d}.csv", newline="") as f:
        return list(csv.DictReader(f))
