"""Parses of single sentences kept on disk by text, so evaluation sentences are parsed once for every model."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from tqdm.auto import tqdm

from st_contrastive.parsing.parsed_sentence import ParsedSentence


def cached_parses(texts: list[str], parser, path: str | Path, batch_size: int = 1000) -> dict[str, ParsedSentence]:
    """``{text: parse}`` for ``texts``: read from the jsonl.gz at ``path`` (records of ``ParsedSentence.to_dict``
    with their ``text``), the missing ones parsed with ``parser`` (a :class:`~st_contrastive.parsing.Parser`)
    and appended. The file records the parser's name; a file made by another parser is refused."""
    path = Path(path)
    known: dict[str, ParsedSentence] = {}
    if path.exists():
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for line in f:
                record = json.loads(line)
                if record.get("parser", parser.name) != parser.name:
                    raise ValueError(f"{path} holds parses by {record['parser']!r}, not {parser.name!r}: "
                                     "use another cache file")
                known[record["text"]] = ParsedSentence.from_dict(record)
    missing = list(dict.fromkeys(t for t in texts if t not in known))
    if missing:
        path.parent.mkdir(parents=True, exist_ok=True)
        with gzip.open(path, "at", encoding="utf-8") as f:  # gzip members append: earlier batches stay readable
            for start in tqdm(range(0, len(missing), batch_size), desc=f"Parsing {len(missing)} sentences",
                              unit="batch"):
                batch = missing[start : start + batch_size]
                for text, parsed in zip(batch, parser.parse(batch), strict=True):
                    parsed.text = text
                    known[text] = parsed
                    f.write(json.dumps(parsed.to_dict() | {"parser": parser.name}) + "\n")
    return {t: known[t] for t in texts}
