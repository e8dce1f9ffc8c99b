"""Local text files as rows: ``.tsv``, ``.csv`` or ``.jsonl`` (each optionally ``.gz``) as dicts, and the lines of
any UTF-8 text file, with every error naming the file and the line."""

from __future__ import annotations

import csv
import gzip
import io
import json
from collections.abc import Iterator
from pathlib import Path

from st_contrastive.atomic_files import write_atomically


def text_lines(path: str | Path) -> Iterator[str]:
    """The lines of a UTF-8 text file (``.gz`` too), line ends kept; a byte-order mark, as spreadsheets write one
    ("CSV UTF-8"), is dropped. A line that is not UTF-8 is refused naming the file, the line and the byte."""
    path = Path(path)
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                yield raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as error:
                raise ValueError(
                    f"{path}, line {number}: not UTF-8 text (byte {raw[error.start]:#04x} at column {error.start + 1}); "
                    "save the file as UTF-8"
                ) from None


def json_lines(path: str | Path, limit: int | None = None) -> list[dict]:
    """The JSON objects of a ``.jsonl`` file, one per non-blank line (at most ``limit``)."""
    rows = []
    for number, line in enumerate(text_lines(path), start=1):
        if limit is not None and len(rows) >= limit:
            break
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}, line {number}: not valid JSON ({error.msg})") from None
        if not isinstance(row, dict):
            raise ValueError(f"{path}, line {number}: expected a JSON object, got {type(row).__name__}")  # noqa: TRY004
        rows.append(row)
    return rows


# A cell a spreadsheet would run as a formula starts with one of these (OWASP's CSV injection list).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value):
    """``value`` as a spreadsheet shows it and never runs it: text that starts like a formula gets a leading ``'``,
    which spreadsheets hide and read as "text"."""
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_STARTS) else value


def spreadsheet_text(value: str) -> str:
    """The text :func:`spreadsheet_safe` escaped, read back from a file it wrote."""
    return value[1:] if value.startswith("'") and value[1:].startswith(FORMULA_STARTS) else value


def write_csv_atomically(path: str | Path, columns: tuple[str, ...], rows: list[dict]) -> None:
    """Write a CSV for people and spreadsheets with :func:`~st_contrastive.atomic_files.write_atomically`: a kill
    leaves the old file or the new one, never half of one. Cells that would run as formulas are escaped
    (:func:`spreadsheet_safe`)."""
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    writer.writerows({key: spreadsheet_safe(value) for key, value in row.items()} for row in rows)
    write_atomically(path, text.getvalue())


def read_rows(path: str | Path) -> list[dict]:
    """Every row of ``path`` as a dict keyed by column name. TSV is read without quoting (SentEval's files hold
    bare quote characters); CSV with the usual quoting, as spreadsheets write it."""
    path = Path(path)
    if ".jsonl" in path.name or ".json" in path.name:
        return json_lines(path)
    if ".csv" in path.name:
        return list(csv.DictReader(text_lines(path)))
    return list(csv.DictReader(text_lines(path), delimiter="\t", quoting=csv.QUOTE_NONE))


def label_order(value: str) -> tuple:
    """The sort key of a file's label names: numbers in number order (2 before 10), names alphabetically."""
    return (0, int(value), "") if value.lstrip("-").isdigit() else (1, 0, value)


def check_text_file(path: str | Path, fields: tuple[str, ...] = ()) -> None:
    """What can be seen of a local data file without loading anything heavy: every line is UTF-8, there is a row,
    and a table's first row has ``fields``. Each problem is one ValueError naming the file (and the line)."""
    path = Path(path)
    rows = 0
    for line in text_lines(path):  # reads it all: a bad byte anywhere is named now, not after a model load
        rows += bool(line.strip())
    if not rows:
        raise ValueError(f"{path}: no rows (the file is empty)")
    if fields and any(kind in path.name for kind in (".csv", ".tsv", ".jsonl", ".json")):
        first = next(iter(read_rows(path)), {})
        missing = [name for name in fields if name not in first]
        if missing:
            raise ValueError(f"{path}: no {', '.join(map(repr, missing))} field; its fields are {sorted(first)}")
