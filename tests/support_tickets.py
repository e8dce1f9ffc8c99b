"""A user's own support tickets, as the README's "your own data" example reads them: 18 texts in three classes,
and the person who labels the queries of an active-learning round."""

import csv

SUPPORT = {
    "billing": ["I was charged twice this month", "Please refund my last invoice", "My card was billed too much",
                "Why did my subscription price go up", "Cancel the extra charge on my account",
                "The invoice shows a fee I never agreed to"],
    "bug": ["The app crashes when I open settings", "Saving a file gives error 500", "The export button does nothing",
            "Login page freezes after the update", "Images fail to load on the dashboard",
            "Search returns the wrong results since Monday"],
    "question": ["How do I change my password", "Can I add a second user to my plan", "Where is the API key",
                 "Is there a dark mode", "What file types can I upload", "Do you offer a student discount"],
}


def write_support_csv(path, labelled_per_class: int):
    """A user's file: the first ``labelled_per_class`` texts of each class carry their label, the rest none."""
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["text", "label"])
        for label, texts in SUPPORT.items():
            writer.writerows([text, label if k < labelled_per_class else ""] for k, text in enumerate(texts))


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
