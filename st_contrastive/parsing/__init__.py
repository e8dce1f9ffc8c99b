"""Parsed sentences for the structured view encoders: the type, readers, binarization and head projection."""

from st_contrastive.parsing.binarize import binarize
from st_contrastive.parsing.head_projection import project_heads
from st_contrastive.parsing.parsed_sentence import ParsedSentence, Tree
from st_contrastive.parsing.readers import from_stanza_sentence, from_stanza_tree, read_bracketed, read_conllu

__all__ = ["ParsedSentence", "Tree", "binarize", "from_stanza_sentence", "from_stanza_tree", "project_heads",
           "read_bracketed", "read_conllu"]
