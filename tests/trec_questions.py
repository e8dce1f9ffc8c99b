"""TREC-6 questions (the shared data) as a person's own file for an active-learning run labelled by hand: a few
questions of each of a few classes, some with their label, the rest without, and a test split."""

import csv

CLASSES = ["DESC", "HUM", "LOC"]


def write_trec_questions(path, per_class: int, labelled_per_class: int, test_per_class: int) -> dict[str, str]:
    """The first ``per_class`` training questions of each of :data:`CLASSES`, the first ``labelled_per_class`` of
    them with their label, and the next ``test_per_class`` of each as the test split (a ``split`` column). Returns
    every question's gold label, which the person gives."""
    from st_contrastive.data.text_classification import load_text_classification

    trec = load_text_classification("trec")
    by_class = {name: [] for name in CLASSES}
    for text, label in zip(trec.train_texts, trec.train_labels, strict=True):
        name = trec.label_names[label]
        if name in by_class and len(by_class[name]) < per_class + test_per_class and text not in by_class[name]:
            by_class[name].append(text)
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["text", "label", "split"])
        for name, texts in by_class.items():
            writer.writerows(
                [text, name if k < labelled_per_class else "", "train"] for k, text in enumerate(texts[:per_class])
            )
        for name, texts in by_class.items():
            writer.writerows([text, name, "test"] for text in texts[per_class:])
    return {text: name for name, texts in by_class.items() for text in texts}
