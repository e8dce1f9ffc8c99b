"""A parser by its spec (``spacy``, ``stanza:DIR``...): what recipes, saved models and the command line name."""

from __future__ import annotations

from st_contrastive.parsing.parser import Parser


def make_parser(spec: str) -> Parser:
    """The parser a spec names: ``spacy``, ``spacy:NAME_OR_PATH``, ``stanza`` (models from ``stanza.download``)
    or ``stanza:DIR`` (a local stanza model folder). Nothing is downloaded; a missing model is a ``ValueError``
    saying what to install."""
    backend, _, model = spec.partition(":")
    if backend == "spacy":
        from st_contrastive.parsing.spacy_parser import DEFAULT_SPACY_MODEL, SpacyParser

        return SpacyParser(model or DEFAULT_SPACY_MODEL)
    if backend == "stanza":
        from st_contrastive.parsing.stanza_parser import StanzaParser

        return StanzaParser(model or None)
    raise ValueError(f"unknown parser {spec!r}: use spacy, spacy:NAME_OR_PATH, stanza or stanza:DIR")
