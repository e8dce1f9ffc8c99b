"""A run's labels are row ids of its dataset file: the file must not change under the run. The run records a
fingerprint of each train row's text when it starts, and every later start (the loop, the labelling page) compares
the file with it, naming the rows that differ, before anything is trained or labelled."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from st_contrastive.atomic_files import write_atomically

FILE = "dataset_fingerprint.json"


def fingerprints(texts: Sequence[str]) -> list[str]:
    return [hashlib.sha256(text.encode()).hexdigest()[:16] for text in texts]


def check_unchanged(run_dir: str | Path, dataset: str, texts: Sequence[str]) -> None:
    """Record the fingerprints of ``texts`` in a new run; in a run that has them, refuse a dataset whose rows differ,
    naming the first of them."""
    path = Path(run_dir) / FILE
    current = fingerprints(texts)
    if not path.is_file():
        Path(run_dir).mkdir(parents=True, exist_ok=True)
        write_atomically(path, json.dumps({"dataset": dataset, "rows": current}) + "\n")
        return
    recorded = json.loads(path.read_text(encoding="utf-8"))["rows"]
    changed = [i for i, (old, new) in enumerate(zip(recorded, current)) if old != new]
    if changed or len(recorded) != len(current):
        rows = ", ".join(map(str, changed[:5])) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
        what = f"train rows {rows} hold other texts" if changed else ""
        if len(recorded) != len(current):
            what += ("; " if what else "") + f"it has {len(current)} train rows, not {len(recorded)}"
        raise ValueError(
            f"{dataset} changed since the run in {run_dir} started ({what}): its labels are row ids of the file as it "
            "was; restore that file, or start a new run in another output folder"
        )
