"""Rows of a local table file: ``.tsv``, ``.csv`` or ``.jsonl`` (each optionally ``.gz``), as dicts."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path


def read_rows(path: str | Path) -> list[dict]:
    """Every row of ``path`` as a dict keyed by column name. TSV is read without quoting (SentEval's files hold
    bare quote characters); CSV with the usual quoting, as spreadsheets write it."""
    path = Path(path)
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", newline="") as f:
        if ".jsonl" in path.name or ".json" in path.name:
            return [json.loads(line) for line in f if line.strip()]
        if ".csv" in path.name:
            return list(csv.DictReader(f))
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
