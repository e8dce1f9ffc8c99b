"""Parses from files: CoNLL-U (dependencies) and PTB brackets (constituents), read by stanza's own readers."""

from __future__ import annotations

from pathlib import Path

from st_contrastive.extras import require_extra
from st_contrastive.parsing.parsed_sentence import ParsedSentence, Tree


def from_stanza_tree(tree) -> tuple[Tree | int, list[str], list[str]]:
    """A stanza constituency tree as (our tree over token positions, its words, their POS tags)."""
    words: list[str] = []
    tags: list[str] = []

    def convert(node) -> Tree | int:
        if node.is_preterminal():
            words.append(node.children[0].label)
            tags.append(node.label)
            return len(words) - 1
        if node.is_leaf():  # a bare word without a pre-terminal: its tag is unknown
            words.append(node.label)
            tags.append("_")
            return len(words) - 1
        return Tree(node.label, [convert(child) for child in node.children])

    return convert(tree), words, tags


def from_stanza_sentence(sentence, sentence_id: str = "") -> ParsedSentence:
    """A stanza ``Sentence`` (from a pipeline or a CoNLL-U file): its words, UPOS (else XPOS), heads, relations,
    and its constituency tree when the pipeline had a constituency processor."""
    words = sentence.words
    constituency = None
    if getattr(sentence, "constituency", None) is not None:
        constituency, _, _ = from_stanza_tree(sentence.constituency)
    return ParsedSentence(
        tokens=[w.text for w in words],
        pos=[w.upos or w.xpos or "_" for w in words],
        heads=[int(w.head) if w.head is not None else -1 for w in words],
        relations=[w.deprel or "_" for w in words],
        constituency=constituency,
        constituency_source="parser" if constituency is not None else None,
        id=sentence_id,
    )


def read_conllu(path: str | Path | None = None, text: str | None = None) -> list[ParsedSentence]:
    """Sentences of a CoNLL-U file (or string), multiword tokens split into their words. A sentence without a
    ``# sent_id`` gets its 1-based position as id; a malformed one is an error naming it."""
    conll = require_extra("stanza.utils.conll", "parsing")
    document = conll.CoNLL.conll2doc(input_file=str(path) if path is not None else None, input_str=text)
    sentences = []
    for number, sentence in enumerate(document.sentences, start=1):
        sentence_id = str(getattr(sentence, "sent_id", None) or number)
        sentences.append(from_stanza_sentence(sentence, sentence_id))
    return sentences


def read_bracketed(
    path: str | Path | None = None, text: str | None = None
) -> list[tuple[Tree | int, list[str], list[str]]]:
    """Trees of a PTB-bracketed file (or string), one per top-level bracket: (tree, words, POS tags)."""
    tree_reader = require_extra("stanza.models.constituency.tree_reader", "parsing")
    trees = tree_reader.read_treebank(str(path)) if path is not None else tree_reader.read_trees(text)
    return [from_stanza_tree(tree) for tree in trees]
