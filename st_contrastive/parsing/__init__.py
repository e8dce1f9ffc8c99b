"""Parsed sentences for the structured view encoders: the type, parser backends (spaCy, stanza) behind one
interface, corpus parsing into a resumable cache, readers, binarization and head projection.

spaCy and stanza are imported only when a parser is built, so importing this package stays light.
"""

from st_contrastive.parsing.binarize import binarize
from st_contrastive.parsing.corpus import parse_corpus, read_parsed
from st_contrastive.parsing.head_projection import project_heads
from st_contrastive.parsing.make_parser import make_parser
from st_contrastive.parsing.parse_cache import ParseCache
from st_contrastive.parsing.parsed_sentence import ParsedSentence, Tree
from st_contrastive.parsing.parser import Parser
from st_contrastive.parsing.readers import from_stanza_sentence, from_stanza_tree, read_bracketed, read_conllu
from st_contrastive.parsing.spacy_parser import SpacyParser
from st_contrastive.parsing.stanza_parser import StanzaParser

__all__ = [
    "ParseCache",
    "ParsedSentence",
    "Parser",
    "SpacyParser",
    "StanzaParser",
    "Tree",
    "binarize",
    "from_stanza_sentence",
    "from_stanza_tree",
    "make_parser",
    "parse_corpus",
    "project_heads",
    "read_bracketed",
    "read_conllu",
    "read_parsed",
]
