"""Checks of a recipe's inputs that run before anything heavy loads, so a typo costs a second, not a model load."""

from __future__ import annotations

import re
from pathlib import Path

# A Hub id: "name" or "owner/name", without a file extension a local file would have.
_HUB_ID = re.compile(r"^[\w.-]+(/[\w.-]+)?$")
_FILE_SUFFIXES = (".jsonl", ".json", ".gz", ".txt", ".tsv", ".csv", ".parquet", ".ndjson")


def require_source(value: str | None, option: str, names: tuple[str, ...] = ()) -> None:
    """``value`` must be one of ``names``, an existing local path, or shaped like a Hugging Face Hub id.

    A value that looks like a local file (a file suffix, ``./``, ``~``, or more than one ``/``) must exist: it
    would otherwise reach the Hub as an id and fail only after minutes of retries.
    """
    if value is None or value in names or Path(value).expanduser().exists():
        return
    looks_local = value.lower().endswith(_FILE_SUFFIXES) or value.startswith((".", "~", "/")) or value.count("/") > 1
    if looks_local or not _HUB_ID.match(value):
        choices = f"one of {', '.join(names)}, " if names else ""
        raise FileNotFoundError(f"{option} {value}: no such file or folder (expected {choices}a local path or a "
                                "Hugging Face Hub id)")


def is_sentence_encoder(model: str) -> bool:
    """Whether ``model`` (a folder or a Hub id) is a saved SentenceTransformer rather than a plain transformers model
    that sentence-transformers reads with mean pooling. A Hub id is looked up in the local cache only (a recipe asks
    once the model is loaded, so its ``modules.json`` is there if it has one)."""
    if Path(model).is_dir():
        return (Path(model) / "modules.json").exists()
    from huggingface_hub import try_to_load_from_cache

    return isinstance(try_to_load_from_cache(model, "modules.json"), str)
