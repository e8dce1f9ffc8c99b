"""Read a corpus of documents from local files or the Hugging Face Hub into a ``datasets.Dataset``."""

from __future__ import annotations

from pathlib import Path

from datasets import Dataset, concatenate_datasets, load_dataset, load_from_disk

from st_contrastive.data.table_file import json_lines, text_lines
from st_contrastive.data_dir import SHARED_CORPORA, data_file


def load_documents(
    source: str | Path,
    text_field: str = "text",
    split: str = "train",
    txt_documents: str = "auto",
    limit: int | None = None,
) -> Dataset:
    """Load documents as a ``Dataset`` with a ``text`` column (other fields are kept).

    ``source`` is a ``.jsonl`` / ``.jsonl.gz`` file (one JSON object per line), a ``.txt`` file, a folder saved
    with ``Dataset.save_to_disk``, or a Hugging Face dataset id / local dataset folder for ``load_dataset``.
    ``.txt`` files hold one document per line (``txt_documents="line"``) or per blank-line separated block
    (``"block"``); ``"auto"`` picks blocks when the file has a blank line.
    """
    path = Path(source)
    if path.is_file():
        name = path.name.lower()
        if name.endswith((".jsonl", ".jsonl.gz", ".json.gz", ".ndjson")):
            rows = json_lines(path, limit)
        elif name.endswith((".txt", ".txt.gz")):
            rows = [{"text": text} for text in _read_txt(path, txt_documents)][:limit]
            text_field = "text"
        else:
            raise ValueError(f"{path}: unknown document file type (use .jsonl, .jsonl.gz or .txt)")
        if not rows:
            raise ValueError(f"{path}: no documents in the file")
        dataset = Dataset.from_list(rows)
    elif path.is_dir() and (path / "state.json").exists():
        dataset = load_from_disk(str(path))
    else:
        dataset = load_dataset(str(source), split=split)
    if limit is not None and len(dataset) > limit:
        dataset = dataset.select(range(limit))
    if text_field not in dataset.column_names:
        raise ValueError(
            f"{source}: no {text_field!r} field; fields are {dataset.column_names} (pass text_field='NAME')"
        )
    if len(dataset) == 0:
        raise ValueError(f"{source}: no documents")
    if text_field != "text":
        if "text" in dataset.column_names:
            dataset = dataset.remove_columns("text")
        dataset = dataset.rename_column(text_field, "text")
    return dataset


def load_corpus(corpus: str | Path, text_field: str = "text", limit: int | None = None) -> Dataset:
    """Documents of a shared corpus by name (``wiki``, ``books``, ``both``), or of any :func:`load_documents` source.

    ``limit`` keeps at most that many documents of each corpus.
    """
    if str(corpus) not in SHARED_CORPORA:
        return load_documents(corpus, text_field, limit=limit)
    parts = [
        load_documents(data_file(name), limit=limit).select_columns(["text"]) for name in SHARED_CORPORA[str(corpus)]
    ]
    return concatenate_datasets(parts)


def _read_txt(path: Path, txt_documents: str) -> list[str]:
    lines = "".join(text_lines(path)).split("\n")
    if txt_documents == "auto":
        txt_documents = "block" if any(not line.strip() for line in lines[:-1]) else "line"
    if txt_documents == "line":
        return [line.strip() for line in lines if line.strip()]
    if txt_documents == "block":
        blocks, current = [], []
        for line in lines + [""]:
            if line.strip():
                current.append(line.strip())
            elif current:
                blocks.append("\n".join(current))
                current = []
        return blocks
    raise ValueError(f"txt_documents must be 'auto', 'line' or 'block', not {txt_documents!r}")


def tokenize_documents(documents: Dataset, tokenizer, batch_size: int = 64, num_proc: int | None = None) -> Dataset:
    """Add a ``token_ids`` column (no special tokens): documents are tokenized once, spans are slices of it."""

    def tokenize(batch: dict) -> dict:
        encoded = tokenizer(batch["text"], add_special_tokens=False, return_attention_mask=False, verbose=False)
        return {"token_ids": encoded["input_ids"]}

    return documents.map(tokenize, batched=True, batch_size=batch_size, num_proc=num_proc, desc="Tokenizing documents")
