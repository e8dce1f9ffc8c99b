"""Parses of single sentences kept on disk by text, so sentences (evaluation sets) are parsed once for every model."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from st_contrastive.parsing.parsed_sentence import ParsedSentence


class ParseCache:
    """A jsonl.gz of ``ParsedSentence.to_dict()`` records (with their ``text`` and the parser's name), read once
    and appended to as new texts are parsed. A file written by another parser is refused."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._parses: dict[str, ParsedSentence] | None = None
        self._parser_name: str | None = None

    def _load(self, parser_name: str) -> dict[str, ParsedSentence]:
        if self._parses is None:
            self._parses = {}
            if self.path.exists():
                with gzip.open(self.path, "rt", encoding="utf-8") as f:
                    for line in f:
                        record = json.loads(line)
                        if record.get("parser", parser_name) != parser_name:
                            raise ValueError(
                                f"{self.path} holds parses by {record['parser']!r}, not {parser_name!r}: "
                                "use another cache file"
                            )
                        self._parses[record["text"]] = ParsedSentence.from_dict(record)
            self._parser_name = parser_name
        elif parser_name != self._parser_name:
            raise ValueError(f"{self.path} holds parses by {self._parser_name!r}, not {parser_name!r}")
        return self._parses

    def parse(self, texts: list[str], parser) -> list[ParsedSentence]:
        """The parses of ``texts``: from the file where known, the others with ``parser`` (a
        :class:`~st_contrastive.parsing.Parser`), appended to the file."""
        known = self._load(parser.name)
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        if missing:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with gzip.open(self.path, "at", encoding="utf-8") as f:  # gzip members append: earlier ones stay readable
                for text, parsed in zip(missing, parser.parse(missing), strict=True):
                    parsed.text = text
                    known[text] = parsed
                    f.write(json.dumps(parsed.to_dict() | {"parser": parser.name}) + "\n")
        return [known[t] for t in texts]
