"""Where the shared public data lives: one setting, ``ST_CONTRASTIVE_DATA``."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "ST_CONTRASTIVE_DATA"

# What the shared folder holds, by name (see its SOURCES.md).
SHARED_CORPORA = {
    "wiki": ("corpus/docs.jsonl.gz",),  # 4,518 Wikipedia articles
    "books": ("corpus/books.jsonl.gz",),  # Gutenberg books in reading order
    "both": ("corpus/docs.jsonl.gz", "corpus/books.jsonl.gz"),
}
SHARED_NLI = {"snli-dev": "nli/snli_dev.tsv.gz", "snli-test": "nli/snli_test.tsv.gz"}
SHARED_TEXT_CLASSIFICATION = {
    "trec": "transfer/trec.tsv",
    "sst2": "transfer/sst2.tsv",  # train + test splits
    "sst5": "transfer/sst5.tsv",
}


def data_dir() -> Path:
    """The shared data folder: ``$ST_CONTRASTIVE_DATA``, else ``../shared/data`` next to the checkout."""
    if os.environ.get(ENV_VAR):
        path = Path(os.environ[ENV_VAR]).expanduser()
        if not path.is_dir():
            raise FileNotFoundError(f"{ENV_VAR}={path} is not a directory")
        return path
    checkout = Path(__file__).resolve().parents[1]
    for candidate in (checkout.parent / "shared" / "data", Path.cwd().parent / "shared" / "data"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"No shared data folder found. Set {ENV_VAR} to the folder holding sts/, nli/, transfer/ and corpus/, "
        "or pass Hugging Face dataset ids instead of local names."
    )


def data_file(relative: str) -> Path:
    """A file under the shared data folder, with an error that names it when it is missing."""
    path = data_dir() / relative
    if not path.exists():
        raise FileNotFoundError(f"{path} not found under {ENV_VAR} ({data_dir()})")
    return path
