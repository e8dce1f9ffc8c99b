"""Who labels the acquired rows: the gold labels (experiments), or a person through a CSV file (real use)."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from st_contrastive.active.state import Pending
from st_contrastive.data.table_file import spreadsheet_text, text_lines, write_csv_atomically

QUERY_COLUMNS = ("round", "id", "text", "label")
# The label of a queried row that fits no class: it is never trained on and never queried again.
IGNORED = "(ignored)"


class AwaitingLabels(Exception):  # not an error: the run stops until a person has labelled
    """The queried rows are in ``path``; the run continues with ``--resume-from-checkpoint`` once their labels are filled in."""

    def __init__(self, path: Path, rows: int, missing: int) -> None:
        self.path, self.rows, self.missing = path, rows, missing
        super().__init__(f"{missing} of the {rows} rows in {path} need a label")


class SimulatedOracle:
    """Answers with the gold labels of the pool (every pool row must have one)."""

    def __init__(self, gold: Sequence[int | None]) -> None:
        self.gold = gold

    def labels(self, pending: Pending, folder: Path, texts: Sequence[str], label_names: list[str]) -> list[int]:
        missing = [i for i in pending.ids if self.gold[i] is None]
        if missing:
            raise ValueError(f"pool row {missing[0]} has no gold label to simulate the oracle with; use oracle='human'")
        return [int(self.gold[i]) for i in pending.ids]


class HumanOracle:
    """Writes the queried rows to ``queries-round-NNN.csv`` (columns round, id, text, label) and stops; reads the
    labels back when the run resumes. Labels are the label names (or their ids), or :data:`IGNORED` for a text that
    fits none (``None``). A file that does not answer exactly the queried rows of this round is refused, naming the
    row, and the run's state is left as it was."""

    def labels(self, pending: Pending, folder: Path, texts: Sequence[str], label_names: list[str]) -> list[int | None]:
        path = queries_path(folder, pending.round)
        if not path.exists():
            write_queries(path, pending, texts)
            raise AwaitingLabels(path, len(pending.ids), len(pending.ids))
        return read_labels(path, pending, label_names)


def queries_path(folder: str | Path, round_number: int) -> Path:
    """The file a person labels the queries of ``round_number`` in (the labelling page fills in the same file)."""
    return Path(folder) / f"queries-round-{round_number:03d}.csv"


def write_queries(path: Path, pending: Pending, texts: Sequence[str]) -> None:
    """The queried rows of ``pending`` with an empty label column, in the order they were acquired."""
    rows = [{"round": pending.round, "id": i, "text": texts[i], "label": ""} for i in pending.ids]
    write_csv_atomically(path, QUERY_COLUMNS, rows)


def read_labels(path: Path, pending: Pending, label_names: list[str]) -> list[int | None]:
    """The label ids of ``pending.ids`` from a filled-in queries file (``None``: ignored), or an error naming the bad
    row."""
    reader = csv.DictReader(text_lines(path))  # a BOM a spreadsheet adds is dropped, a non-UTF-8 byte named
    absent = [c for c in ("round", "id", "label") if c not in (reader.fieldnames or [])]
    if absent:
        raise ValueError(f"{path}: no {absent[0]!r} column; keep the columns {', '.join(QUERY_COLUMNS)}")
    rows = list(reader)
    by_name = {name: i for i, name in enumerate(label_names)}
    asked, answered, missing = set(pending.ids), {}, 0
    for number, row in enumerate(rows, start=2):  # line numbers as a spreadsheet shows them (1 is the header)
        where = f"{path}, line {number}"
        if str(row["round"]).strip() != str(pending.round):
            raise ValueError(
                f"{where}: round {row['round']!r}, but the run waits for the labels of round "
                f"{pending.round} (queries-round-{pending.round:03d}.csv)"
            )
        try:
            row_id = int(row["id"])
        except ValueError:
            raise ValueError(f"{where}: id {row['id']!r} is not a row id of the pool") from None
        if row_id not in asked:
            raise ValueError(f"{where}: row id {row_id} was not queried in round {pending.round}")
        if row_id in answered:
            raise ValueError(f"{where}: row id {row_id} appears twice")
        label = spreadsheet_text(str(row["label"] or "").strip())  # "-1" was written as "'-1"
        if not label:
            missing += 1
            continue
        if label == IGNORED:
            answered[row_id] = None
        elif label in by_name:
            answered[row_id] = by_name[label]
        elif label.isdigit() and int(label) < len(label_names):
            answered[row_id] = int(label)
        else:
            raise ValueError(
                f"{where}: unknown label {label!r}; expected one of {label_names} (or 0-{len(label_names) - 1}, "
                f"or {IGNORED} for a text that fits none)"
            )
    if missing:
        raise AwaitingLabels(path, len(pending.ids), missing)
    absent_ids = [i for i in pending.ids if i not in answered]
    if absent_ids:
        raise ValueError(f"{path}: row id {absent_ids[0]} (queried in round {pending.round}) is missing")
    return [answered[i] for i in pending.ids]
