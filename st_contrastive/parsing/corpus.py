"""Parse a corpus once into a cache of :class:`ParsedSentence` records, resumable, with every rejection counted.

CORPUS is a ``.jsonl`` / ``.jsonl.gz`` of documents (``"text"``, and ``"id"``, else the 1-based line number) with
one paragraph per ``"\\n"`` line, split into sentences by the parser; or a ``.txt`` file with one sentence per line
(ids = 1-based line numbers), each line parsed whole. The output is a ``.jsonl.gz``, one ``ParsedSentence.to_dict()``
per sentence in corpus order, ids ``<document id>:<paragraph>:<sentence>`` (from 0) or the ``.txt`` line number.

Next to it: ``<output>.rejected.tsv`` (id, reason, text) for every sentence not written, and
``<output>.progress.tsv``: the settings (first line, JSON) and one checkpoint per written batch (documents done,
records, rejected rows). Re-running on the same output resumes after the last checkpoint whose records are all
readable, so a crash (even one that left a truncated gzip tail) loses at most one batch.
"""

from __future__ import annotations

import gzip
import json
import os
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

from st_contrastive.parsing.parsed_sentence import ParsedSentence
from st_contrastive.parsing.parser import Parser

CORPUS_SUFFIXES = (".jsonl", ".jsonl.gz", ".txt")
REJECTED_HEADER = "id\treason\ttext\n"


def read_parsed(path: str | Path) -> Iterator[ParsedSentence]:
    """The sentences of a parsed cache (``.jsonl.gz`` or ``.jsonl``), in order. A truncated file is an error
    naming it (re-running ``st-contrastive parse`` on it resumes and repairs it)."""
    path = Path(path)
    opener = gzip.open if path.name.endswith(".gz") else open
    count = 0
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            for count, line in enumerate(f, start=1):
                yield ParsedSentence.from_dict(json.loads(line))
    except (EOFError, gzip.BadGzipFile, zlib.error, json.JSONDecodeError) as error:
        raise ValueError(
            f"{path} is truncated or damaged after {count - 1} records ({error}); re-run "
            "st-contrastive parse with the same options to repair and finish it"
        ) from error


def check_corpus(corpus_path: str | Path) -> Path:
    """The corpus path, if it exists and has a known suffix (cheap: run before loading a parser)."""
    path = Path(corpus_path)
    if not path.is_file():
        raise FileNotFoundError(f"CORPUS {path}: no such file")
    if not path.name.endswith(CORPUS_SUFFIXES):
        raise ValueError(f"CORPUS {path}: unknown file type (use {', '.join(CORPUS_SUFFIXES)})")
    return path


def check_output(output_path: str | Path) -> Path:
    path = Path(output_path)
    if not path.name.endswith(".jsonl.gz"):
        raise ValueError(f"-o {path}: the parsed output must be a .jsonl.gz file")
    return path


def read_corpus(path: Path) -> Iterator[tuple[str, list[str]]]:
    """(document id, its texts to parse) in order: paragraphs of a JSONL document, or one ``.txt`` line."""
    if path.name.endswith(".txt"):
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, start=1):
                yield str(number), [line.rstrip("\r\n")]
        return
    seen: dict[str, int] = {}
    with (gzip.open if path.name.endswith(".gz") else open)(path, "rt", encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                document = json.loads(line)
                text = document["text"]
            except (json.JSONDecodeError, KeyError, TypeError) as error:
                raise ValueError(f'{path}:{number}: not a JSON object with a "text" field ({error})') from error
            document_id = str(document.get("id", number))
            if document_id in seen:  # sentence ids would repeat
                raise ValueError(f"{path}:{number}: document id {document_id!r} repeats line {seen[document_id]}")
            seen[document_id] = number
            yield document_id, text.split("\n")


def parse_corpus(
    corpus_path: str | Path,
    output_path: str | Path,
    parser: Parser,
    batch_size: int = 256,
    max_words: int = 128,
    limit_documents: int | None = None,
    show_progress: bool = True,
) -> dict:
    """Parse ``corpus_path`` into ``output_path`` (see the module docstring), resuming a previous run on it.

    Args:
        batch_size: paragraphs (or ``.txt`` lines) per parser call; the output is checkpointed after each batch.
        max_words: sentences with more tokens are rejected (``too-long``), as are empty ones (``empty``) and
            texts the parser fails on (``parser-error``); all go to ``<output>.rejected.tsv``.
        limit_documents: stop after this many documents in all (a later run without it continues).

    Returns:
        A summary: documents and sentences in the output, rejected counts by reason, and this run's seconds and
        sentences per second.
    """
    from tqdm.auto import tqdm

    corpus = check_corpus(corpus_path).resolve()
    output = check_output(output_path)
    settings = {
        "parser": parser.name,
        "corpus": str(corpus),
        "corpus_bytes": corpus.stat().st_size,
        "max_words": max_words,
    }
    documents_done, records, rejected = _resume(output, settings)
    one_sentence_per_text = corpus.name.endswith(".txt")
    start, new_records = time.perf_counter(), 0
    progress = tqdm(
        total=limit_documents, initial=documents_done, unit="doc", desc="parsing", disable=not show_progress
    )
    output.parent.mkdir(parents=True, exist_ok=True)
    with (
        gzip.open(output, "at", encoding="utf-8") as out,
        open(_sidecar(output, "rejected"), "a", encoding="utf-8") as rejected_file,
        open(_sidecar(output, "progress"), "a", encoding="utf-8") as progress_file,
    ):
        documents = _skip(read_corpus(corpus), documents_done, limit_documents)
        for batch in _batches(documents, batch_size):
            items = [
                (f"{doc_id}:{p}" if not one_sentence_per_text else doc_id, text)
                for doc_id, texts in batch
                for p, text in enumerate(texts)
            ]
            for item_id, text, result in _parse_items(parser, items, one_sentence_per_text, max_words):
                if isinstance(result, str):
                    rejected[result.split(":")[0]] += 1
                    rejected_file.write(f"{item_id}\t{result}\t{' '.join(text.split())}\n")
                else:
                    out.write(json.dumps(result.to_dict(), ensure_ascii=False) + "\n")
                    new_records += 1
            # Checkpoint only once the records and rejections are on disk, so a checkpoint never runs ahead.
            out.flush()
            rejected_file.flush()
            documents_done += len(batch)
            progress_file.write(f"{documents_done}\t{records + new_records}\t{sum(rejected.values())}\n")
            progress_file.flush()
            progress.update(len(batch))
            progress.set_postfix(sentences=records + new_records, rejected=sum(rejected.values()))
    progress.close()
    seconds = time.perf_counter() - start
    return {
        "documents": documents_done,
        "sentences": records + new_records,
        "rejected": dict(rejected),
        "new_sentences": new_records,
        "seconds": round(seconds, 2),
        "sentences_per_second": round(new_records / seconds, 1) if seconds > 0 else 0.0,
        "output": str(output),
        "rejected_file": str(_sidecar(output, "rejected")),
    }


def _parse_items(
    parser: Parser, items: list[tuple[str, str]], one_sentence_per_text: bool, max_words: int
) -> Iterator[tuple[str, str, ParsedSentence | str]]:
    """(id, text, sentence or rejection reason) for every sentence of ``items`` (id, text), in order."""
    results: dict[int, list | str] = {}
    to_parse = []
    for index, (item_id, text) in enumerate(items):
        if not text.strip():
            results[index] = "empty"
        elif one_sentence_per_text and len(text.split()) > max_words:  # tokens >= words: too long unparsed
            results[index] = f"too-long: more than {max_words} words"
        else:
            to_parse.append(index)
    texts, ids = [items[i][1] for i in to_parse], [items[i][0] for i in to_parse]
    call: Callable = parser.parse if one_sentence_per_text else parser.split_and_parse
    for index, result in zip(to_parse, _parse_each(call, texts, ids)):
        results[index] = [result] if one_sentence_per_text and isinstance(result, ParsedSentence) else result
    for index, (item_id, text) in enumerate(items):
        result = results[index]
        if isinstance(result, BaseException):
            yield item_id, text, f"parser-error: {' '.join(str(result).split()) or type(result).__name__}"
        elif isinstance(result, str):
            yield item_id, text, result
        else:
            for sentence in result:
                if len(sentence.tokens) > max_words:
                    yield sentence.id, sentence.text, f"too-long: {len(sentence.tokens)} tokens"
                else:
                    yield sentence.id, sentence.text, sentence


def _parse_each(call: Callable, texts: list[str], ids: list[str]) -> list:
    """``call(texts, ids)``; if the batch fails, each text alone, so a bad text costs only itself (its result is
    then the exception)."""
    if not texts:
        return []
    try:
        return call(texts, ids)
    except Exception:  # noqa: BLE001 - whatever the backend raised, retry text by text to isolate the bad one
        results = []
        for text, item_id in zip(texts, ids):
            try:
                results.append(call([text], [item_id])[0])
            except Exception as error:  # noqa: BLE001 - any backend failure is a counted rejection, not a crash
                results.append(error)
        return results


def _skip(documents: Iterator, done: int, limit: int | None) -> Iterator:
    for index, document in enumerate(documents):
        if limit is not None and index >= limit:
            return
        if index >= done:
            yield document


def _batches(documents: Iterator, batch_size: int) -> Iterator[list]:
    """Whole documents, grouped until a group holds ``batch_size`` texts (the resume unit is a document)."""
    batch, size = [], 0
    for document in documents:
        batch.append(document)
        size += len(document[1])
        if size >= batch_size:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _sidecar(output: Path, kind: str) -> Path:
    return output.with_name(f"{output.name}.{kind}.tsv")


def _resume(output: Path, settings: dict) -> tuple[int, int, Counter]:
    """Prepare ``output`` and its sidecars for writing; (documents done, records kept, rejected by reason).

    A fresh output gets the settings line. An existing one must have been written with the same settings; it is
    cut back to its last checkpoint whose records can all be read (rewritten when its tail was damaged).
    """
    progress, rejected_path = _sidecar(output, "progress"), _sidecar(output, "rejected")
    if not progress.exists():
        if output.exists():
            raise ValueError(
                f"{output} exists but has no {progress.name}: it was not written by st-contrastive "
                "parse; remove it or write to another output file"
            )
        output.parent.mkdir(parents=True, exist_ok=True)
        progress.write_text(json.dumps(settings) + "\n", encoding="utf-8")
        rejected_path.write_text(REJECTED_HEADER, encoding="utf-8")
        return 0, 0, Counter()
    lines = progress.read_text(encoding="utf-8").split("\n")
    previous = json.loads(lines[0])
    for key, value in settings.items():
        if previous.get(key) != value:
            raise ValueError(
                f"{output} was parsed with {key} {previous.get(key)!r}, not {value!r}: resume it with the same "
                f"{key}, or write to another output file to start over"
            )
    readable, clean = _count_readable(output)
    checkpoints = [(0, 0, 0)]
    for line in lines[1:-1]:  # the last element is "" after a complete line, or a line cut by a crash
        documents, records, rejected = map(int, line.split("\t"))
        if records <= readable:
            checkpoints.append((documents, records, rejected))
    documents, records, rejected_rows = checkpoints[-1]
    if output.exists() and not (clean and readable == records):  # a damaged tail, or records past the checkpoint
        _rewrite_gzip_lines(output, records)
    progress.write_text(
        "".join(line + "\n" for line in [lines[0], *("\t".join(map(str, c)) for c in checkpoints[1:])]),
        encoding="utf-8",
    )
    kept = rejected_path.read_text(encoding="utf-8").split("\n")[1:][:rejected_rows] if rejected_path.exists() else []
    rejected_path.write_text(REJECTED_HEADER + "".join(row + "\n" for row in kept), encoding="utf-8")
    return documents, records, Counter(row.split("\t")[1].split(":")[0] for row in kept)


def _count_readable(path: Path) -> tuple[int, bool]:
    """Complete JSON lines readable from the start of a gzip file, and whether the whole file read cleanly."""
    count = 0
    if not path.exists():
        return 0, False
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for line in f:
                if not line.endswith("\n"):
                    return count, False
                json.loads(line)
                count += 1
    except (EOFError, gzip.BadGzipFile, zlib.error, json.JSONDecodeError, UnicodeDecodeError):
        return count, False
    return count, True


def _rewrite_gzip_lines(path: Path, keep: int) -> None:
    """Replace ``path`` by a clean gzip of its first ``keep`` lines (all known readable)."""
    temporary = path.with_name(path.name + ".tmp")
    with gzip.open(path, "rt", encoding="utf-8") as source, gzip.open(temporary, "wt", encoding="utf-8") as target:
        for _, line in zip(range(keep), source):
            target.write(line)
    os.replace(temporary, path)
