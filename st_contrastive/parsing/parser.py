"""The parser interface: raw text in, :class:`ParsedSentence` out, whichever backend (spaCy, stanza) parses it.

Every backend gives each sentence a constituency tree: the parser's own where it has a constituency model
(``constituency_source="parser"``), else one derived from the dependency parse by head projection
(``"head-projection"``). A broken dependency parse is repaired (:func:`repair_heads`), never dropped.
"""

from __future__ import annotations

from st_contrastive.parsing.head_projection import project_heads
from st_contrastive.parsing.parsed_sentence import ParsedSentence

SPACY_INSTALL = 'pip install "st-contrastive[parsing]"'
STANZA_INSTALL = 'stanza.download("en") once, or pass stanza:DIR (a folder of stanza models)'


class Parser:
    """A dependency parser (and, where ``has_constituency``, a constituency parser) behind one interface.

    ``parse`` treats each text as ONE sentence (one tree per text, never split): use it for sentence-level data
    such as STS or NLI pairs. ``split_and_parse`` runs the backend's own sentence segmentation: use it for
    paragraphs and documents.
    """

    name: str = "parser"
    has_constituency: bool = False

    def parse(self, texts: list[str], ids: list[str] | None = None) -> list[ParsedSentence]:
        """One :class:`ParsedSentence` per text, with id ``ids[i]`` (default ``str(i)``) and ``text`` set."""
        raise NotImplementedError

    def split_and_parse(self, documents: list[str], ids: list[str] | None = None) -> list[list[ParsedSentence]]:
        """The sentences of each document, with ids ``<document id>:<k>`` (k from 0)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


def default_ids(texts: list[str], ids: list[str] | None) -> list[str]:
    """``ids`` as strings, or positions; an error when the counts differ."""
    if ids is None:
        return [str(i) for i in range(len(texts))]
    if len(ids) != len(texts):
        raise ValueError(f"{len(texts)} texts but {len(ids)} ids")
    return [str(i) for i in ids]


def normalize_space(text: str) -> str:
    """Runs of whitespace (newlines included) as one space, so no backend makes whitespace tokens or splits on
    a newline."""
    return " ".join(text.split())


def repair_heads(heads: list[int], relations: list[str]) -> tuple[list[int], list[str]]:
    """A valid dependency tree from a backend's heads (1-based, 0 = root), changing as little as possible.

    A backend does not promise one tree: spaCy's parser, held to one sentence by preset boundaries, could leave
    several roots (none seen in 3,000 MR sentences, but nothing forbids it), and a stanza word may lack a head.
    Dropping such sentences would bias a corpus against hard ones, so: a head outside the sentence (or a token
    heading itself) makes that token a root; the first root stays the root (token 1 when there is none); every
    other root, and a token on a cycle, attaches to it with the relation ``dep`` (UD's unspecified dependency).
    """
    n = len(heads)
    heads = [h if 0 <= h <= n and h != i + 1 else 0 for i, h in enumerate(heads)]
    relations = list(relations)
    roots = [i for i, h in enumerate(heads) if h == 0] or [0]
    root = roots[0]
    heads[root] = 0
    for i in roots[1:]:
        heads[i], relations[i] = root + 1, "dep"
    for start in range(n):  # follow heads up; reaching a token already seen means a cycle through it
        node, seen = start, set()
        while heads[node] != 0 and node not in seen:
            seen.add(node)
            node = heads[node] - 1
        if heads[node] != 0:
            heads[node], relations[node] = root + 1, "dep"
    return heads, relations


def add_constituency(sentence: ParsedSentence) -> ParsedSentence:
    """``sentence`` with a constituency tree: its parser's when it has one, else head projection."""
    if sentence.constituency is not None:
        sentence.constituency_source = sentence.constituency_source or "parser"
    else:
        sentence.constituency, sentence.constituency_source = project_heads(sentence), "head-projection"
    return sentence
