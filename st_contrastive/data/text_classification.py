"""Single-sentence classification data (TREC-6, SST-2, a user's own file) as a train pool and a test split."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from st_contrastive.data.label_studio import is_label_studio_export, read_label_studio_export
from st_contrastive.data.table_file import label_order, read_rows
from st_contrastive.data_dir import SHARED_TEXT_CLASSIFICATION, data_file

TEXT_COLUMNS = ("text", "sentence")
LABEL_COLUMNS = ("label_name", "label_text", "label")  # a name column first: it is what a person labels with


@dataclass
class TextClassificationData:
    """Texts of a pool to label (``train``) and of a test split, with label ids into ``label_names``.

    ``train_labels[i]`` is ``None`` where the pool row has no label yet (a human labels it when asked).
    ``test_texts`` is empty when the source has no test split (no accuracy is then reported).
    """

    name: str
    label_names: list[str]
    train_texts: list[str]
    train_labels: list[int | None]
    test_texts: list[str]
    test_labels: list[int]

    def subset_pool(self, size: int | None, seed: int) -> TextClassificationData:
        """The same data with a random pool of ``size`` rows (all when ``size`` is None or larger)."""
        keep = _sample(len(self.train_texts), size, seed)
        if keep is None:
            return self
        return replace(
            self, train_texts=[self.train_texts[i] for i in keep], train_labels=[self.train_labels[i] for i in keep]
        )

    def subset_test(self, size: int | None, seed: int) -> TextClassificationData:
        """The same data with a random ``size`` rows of the test split (all when ``size`` is None or larger)."""
        keep = _sample(len(self.test_texts), size, seed)
        if keep is None:
            return self
        return replace(
            self, test_texts=[self.test_texts[i] for i in keep], test_labels=[self.test_labels[i] for i in keep]
        )

    def with_dev_split(self, size: int, seed: int) -> TextClassificationData:
        """``size`` random labelled train rows as the evaluation split, in place of the test split (which is then not
        read at all); the other train rows stay the train split. Choices are made on this dev split."""
        import numpy as np

        labelled = [i for i, label in enumerate(self.train_labels) if label is not None]
        if size >= len(labelled):
            raise ValueError(f"dev_size={size}: the train split has {len(labelled)} labelled rows; hold out fewer")
        dev = set(np.random.default_rng(seed).choice(labelled, size, replace=False).tolist())
        kept = [i for i in range(len(self.train_texts)) if i not in dev]
        return replace(
            self,
            train_texts=[self.train_texts[i] for i in kept],
            train_labels=[self.train_labels[i] for i in kept],
            test_texts=[self.train_texts[i] for i in sorted(dev)],
            test_labels=[self.train_labels[i] for i in sorted(dev)],
        )


def _sample(rows: int, size: int | None, seed: int) -> list[int] | None:
    """``size`` of ``rows`` positions in order, drawn with ``seed``; None when all are kept."""
    import numpy as np

    if size is None or size >= rows:
        return None
    return np.sort(np.random.default_rng(seed).choice(rows, size, replace=False)).tolist()


def load_text_classification(source: str, label_names: list[str] | None = None) -> TextClassificationData:
    """``trec`` or ``sst2`` (the shared SentEval files), a ``.csv``/``.tsv``/``.jsonl`` file, a Label Studio JSON
    export (its annotated tasks labelled, the others not), or a Hub dataset id.

    A file has a ``text`` (or ``sentence``) column, a ``label`` column (names or ids; empty where unlabelled) and
    optionally ``split`` (``train``/``test``; other values such as ``dev`` are left out, no value means train).
    ``label_names`` fixes the label set and its order; by default it is the sorted labels the file uses.
    A row without text, or with a label outside ``label_names``, is an error that names the row.
    """
    if source in SHARED_TEXT_CLASSIFICATION:
        path = data_file(SHARED_TEXT_CLASSIFICATION[source])
        return _from_rows(read_rows(path), str(path), source, label_names)
    path = Path(source).expanduser()
    if is_label_studio_export(path):  # all train rows: the annotated tasks labelled, the others the pool
        export = read_label_studio_export(path, label_names)
        return _from_rows(export.rows(), str(path), path.stem, export.label_names)
    if path.is_file():
        return _from_rows(read_rows(path), str(path), path.stem, label_names)
    return _from_hub(source, label_names)


def _column(row: dict, names: tuple[str, ...], what: str, where: str) -> str:
    for name in names:
        if name in row:
            return name
    raise ValueError(f"{where}: no {what} column (looked for {list(names)}); columns are {list(row)}")


def _from_rows(rows: list[dict], where: str, name: str, label_names: list[str] | None) -> TextClassificationData:
    if not rows:
        raise ValueError(f"{where}: no rows")
    text = _column(rows[0], TEXT_COLUMNS, "text", where)
    label = _column(rows[0], LABEL_COLUMNS, "label", where)
    splits = {"train": ([], []), "test": ([], [])}
    for number, row in enumerate(rows, start=1):
        split = str(row.get("split") or "train").strip()
        if split not in splits:
            continue
        if not isinstance(row.get(text), str) or not row[text].strip():
            raise ValueError(f"{where}, row {number}: no text (got {row.get(text)!r})")
        value = row.get(label)
        value = None if value is None or str(value).strip() == "" else str(value).strip()
        if value is None and split == "test":
            raise ValueError(f"{where}, row {number}: a test row needs a label")
        splits[split][0].append(row[text])
        splits[split][1].append(value)
    names = (
        label_names
        or _names_in_id_order(rows, label)
        or sorted({v for _, labels in splits.values() for v in labels if v is not None}, key=label_order)
    )
    if len(names) < 2:
        raise ValueError(
            f"{where}: found the labels {names}; a classifier needs at least two (name them with `label_names`)"
        )
    index = {label_name: i for i, label_name in enumerate(names)}

    def ids(labels: list[str | None], split: str) -> list[int | None]:
        for position, value in enumerate(labels):
            if value is not None and value not in index:
                raise ValueError(
                    f"{where}: {split} row {position + 1} has the label {value!r}, not one of {names} "
                    "(change the row or `label_names`)"
                )
        return [None if value is None else index[value] for value in labels]

    return TextClassificationData(
        name,
        list(names),
        splits["train"][0],
        ids(splits["train"][1], "train"),
        splits["test"][0],
        ids(splits["test"][1], "test"),
    )


def _names_in_id_order(rows: list[dict], label: str) -> list[str] | None:
    """The label names in the order of a numeric ``label`` column beside them (SST-5: very negative … very
    positive, not alphabetically), or None when the rows have no such pair of columns."""
    if label == "label" or not str(rows[0].get("label", "")).strip().isdigit():
        return None
    ids = {str(row[label]).strip(): int(row["label"]) for row in rows if str(row.get(label) or "").strip()}
    return sorted(ids, key=ids.get)


def _from_hub(source: str, label_names: list[str] | None) -> TextClassificationData:
    from datasets import load_dataset

    dataset = load_dataset(source)
    if "train" not in dataset:
        raise ValueError(f"{source}: no train split (splits are {list(dataset)})")
    rows = []
    for split in ("train", "test"):
        if split not in dataset:
            continue
        feature = dataset[split].features.get("label")
        names = getattr(feature, "names", None)  # a ClassLabel: ids to names
        for row in dataset[split]:
            label = row.get("label")
            rows.append(
                {
                    "text": row.get("text", row.get("sentence")),
                    "split": split,
                    "label": names[label] if names and label is not None and label >= 0 else label,
                }
            )
    return _from_rows(rows, source, source.rsplit("/", 1)[-1], label_names)
