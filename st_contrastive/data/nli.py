"""Read natural language inference pairs (SNLI, MultiNLI, AllNLI) into ``premise, hypothesis, label`` rows."""

from __future__ import annotations

import logging
from pathlib import Path

from datasets import Dataset, concatenate_datasets, load_dataset, load_from_disk

from st_contrastive.data.table_file import read_rows
from st_contrastive.data_dir import SHARED_NLI, data_file
from st_contrastive.models.heads.nli_classifier import NLI_LABELS  # ids 0, 1, 2 as in stanfordnlp/snli and all-nli

logger = logging.getLogger(__name__)

NO_GOLD = {"-", "", "-1", -1}  # SNLI pairs whose annotators did not agree
COLUMN_ALIASES = {
    "premise": ("premise", "sentence1", "anchor"),
    "hypothesis": ("hypothesis", "sentence2", "positive"),
    "label": ("label", "gold_label"),
}


def load_nli(source: str, split: str = "train", max_rows: int | None = None) -> Dataset:
    """NLI pairs as a ``Dataset`` with ``premise``, ``hypothesis`` and an integer ``label`` (see ``NLI_LABELS``).

    ``source``: ``snli-dev`` / ``snli-test`` / ``snli-dev+snli-test`` (the shared SNLI files), a ``.tsv(.gz)`` or
    ``.jsonl(.gz)`` file (SNLI/MultiNLI layout: premise/sentence1, hypothesis/sentence2, label/gold_label), a
    saved dataset folder, or a Hub dataset id (``stanfordnlp/snli``, ``sentence-transformers/all-nli`` with
    ``split``). Labels may be names or ids; rows without a gold label (SNLI's ``-`` / ``-1``) are dropped and
    counted in a warning; any other unknown label raises an error naming the row.
    """
    if "+" in source:
        return concatenate_datasets([load_nli(part, split, max_rows) for part in source.split("+")])
    path = data_file(SHARED_NLI[source]) if source in SHARED_NLI else Path(source)
    if path.is_file():
        rows, where = read_rows(path), str(path)
    elif path.is_dir() and (path / "state.json").exists():
        rows, where = load_from_disk(str(path)).to_list(), str(path)
    else:
        dataset = (
            load_dataset(source, "pair-class", split=split)
            if source.endswith("all-nli")
            else load_dataset(source, split=split)
        )
        rows, where = dataset.to_list(), f"{source} [{split}]"
    return _to_dataset(rows, where, max_rows)


def _column(row: dict, name: str, where: str) -> str:
    for alias in COLUMN_ALIASES[name]:
        if alias in row:
            return alias
    raise ValueError(f"{where}: no {name} column (looked for {COLUMN_ALIASES[name]}); columns are {list(row)}")


def _to_dataset(rows: list[dict], where: str, max_rows: int | None) -> Dataset:
    if not rows:
        raise ValueError(f"{where}: no rows")
    premise, hypothesis, label = (_column(rows[0], name, where) for name in ("premise", "hypothesis", "label"))
    out = {"premise": [], "hypothesis": [], "label": []}
    no_gold = 0
    for number, row in enumerate(rows, start=1):
        place = f"{where}, row {number}"
        value = row.get(label)
        if not isinstance(value, (list, dict)) and value in NO_GOLD:
            no_gold += 1
            continue
        for column in (premise, hypothesis):
            if not isinstance(row.get(column), str) or not row[column].strip():
                raise ValueError(f"{place}: no {column} text (got {row.get(column)!r})")
        out["premise"].append(row[premise])
        out["hypothesis"].append(row[hypothesis])
        out["label"].append(label_id(value, place))
        if max_rows is not None and len(out["label"]) >= max_rows:
            break
    if not out["label"]:
        raise ValueError(f"{where}: none of its {len(rows)} rows has a gold label (SNLI marks those '-')")
    if no_gold:
        logger.warning("%s: dropped %d pairs without a gold label", where, no_gold)
    return Dataset.from_dict(out)


def label_id(value, where: str = "") -> int:
    """``entailment``/``neutral``/``contradiction`` (any case) or 0/1/2 to an id; anything else is an error."""
    if value is None:
        raise ValueError(f"{where}: no label")
    if isinstance(value, (list, tuple, dict)):
        raise ValueError(f"{where}: the label is a {type(value).__name__} ({value!r}); expected one NLI label")  # noqa: TRY004
    if isinstance(value, str) and value.strip().lower() in NLI_LABELS:
        return NLI_LABELS.index(value.strip().lower())
    if isinstance(value, (int, str)) and str(value).strip() in {"0", "1", "2"}:
        return int(value)
    raise ValueError(f"{where}: unknown NLI label {value!r}; expected one of {NLI_LABELS} or 0-2")
