"""stanza as a parser backend, the paper's reference parser, run from local models with downloads off.

Real users fetch the English models once with ``stanza.download("en")`` (add ``processors="...,constituency"``
for constituency trees); this backend never downloads. With a constituency processor the trees are stanza's
(``constituency_source="parser"``), else head projections of its dependency parse.
"""

from __future__ import annotations

from pathlib import Path

from st_contrastive.extras import require_extra
from st_contrastive.parsing.parsed_sentence import ParsedSentence
from st_contrastive.parsing.parser import (
    STANZA_INSTALL,
    Parser,
    add_constituency,
    default_ids,
    normalize_space,
    repair_heads,
)
from st_contrastive.parsing.readers import from_stanza_sentence

DEFAULT_PROCESSORS = "tokenize,pos,lemma,depparse"


class StanzaParser(Parser):
    """A ``stanza.Pipeline`` over a local model folder (``download_method=None``).

    Args:
        model_dir: the stanza resources folder (holding ``resources.json``); default stanza's own
            (``$STANZA_RESOURCES_DIR`` or ``~/stanza_resources``).
        processors: stanza processors; add ``constituency`` for parser trees.
        use_gpu: run on the GPU when there is one.
        pretokenized: texts are already tokenized (tokens split by whitespace); no tokenizer model is needed,
            and only :meth:`parse` is available.
        lang: the pipeline language.
        pipeline_options: passed to ``stanza.Pipeline``, e.g. ``depparse_model_path=...`` for a model of
            your own, ``lemma_use_identity=True``, ``depparse_batch_size=...``.
    """

    def __init__(
        self,
        model_dir: str | Path | None = None,
        processors: str = DEFAULT_PROCESSORS,
        use_gpu: bool = False,
        pretokenized: bool = False,
        lang: str = "en",
        **pipeline_options,
    ) -> None:
        stanza = require_extra("stanza", "parsing")
        from stanza.resources.common import DEFAULT_MODEL_DIR

        self.name = f"stanza:{model_dir}" if model_dir else "stanza"
        model_dir = Path(model_dir or DEFAULT_MODEL_DIR).expanduser()
        if not (model_dir / "resources.json").is_file():
            raise ValueError(
                f"parser {self.name}: no stanza models in {model_dir} (no resources.json): run {STANZA_INSTALL}"
            )
        self.has_constituency = "constituency" in processors
        self.pretokenized = pretokenized
        self._options = dict(
            lang=lang,
            dir=str(model_dir),
            processors=processors,
            use_gpu=use_gpu,
            download_method=None,
            logging_level="WARN",
            **pipeline_options,
        )
        self._stanza = stanza
        self._pipelines: dict[bool, object] = {}
        self._pipeline(split=False)  # load now: a missing model fails here, not after reading a corpus

    def _pipeline(self, split: bool):
        """The pipeline that splits sentences, or the one that keeps each text whole (``tokenize_no_ssplit``, or
        pretokenized); built on first use, the second sharing the first's word vectors."""
        if split not in self._pipelines:
            options = dict(self._options)
            if self.pretokenized:
                options["tokenize_pretokenized"] = True
            elif not split:
                options["tokenize_no_ssplit"] = True
            if self._pipelines:
                options["foundation_cache"] = next(iter(self._pipelines.values())).foundation_cache
            try:
                self._pipelines[split] = self._stanza.Pipeline(**options)
            except (FileNotFoundError, ValueError, self._stanza.pipeline.core.PipelineRequirementsException) as error:
                # stanza's missing-language / missing-model / unusable-processors errors, as one line with the fix
                first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
                raise ValueError(
                    f"parser {self.name}: stanza cannot build its pipeline ({first_line}); run {STANZA_INSTALL}"
                ) from error
        return self._pipelines[split]

    def parse(self, texts: list[str], ids: list[str] | None = None) -> list[ParsedSentence]:
        ids = default_ids(texts, ids)
        texts = [normalize_space(text) for text in texts]  # no newline left: no_ssplit keeps each text whole
        sentences = []
        for document, sentence_id, text in zip(self._pipeline(split=False).bulk_process(texts), ids, texts):
            if len(document.sentences) != 1:
                raise ValueError(
                    f"sentence {sentence_id!r}: stanza made {len(document.sentences)} sentences of {text!r}, expected 1"
                )
            sentences.append(self._convert(document.sentences[0], sentence_id, text))
        return sentences

    def split_and_parse(self, documents: list[str], ids: list[str] | None = None) -> list[list[ParsedSentence]]:
        if self.pretokenized:
            raise ValueError(f"parser {self.name} is pretokenized: it cannot split sentences (use parse)")
        ids = default_ids(documents, ids)
        parsed = self._pipeline(split=True).bulk_process([normalize_space(text) for text in documents])
        return [
            [
                self._convert(sentence, f"{document_id}:{k}", sentence.text)
                for k, sentence in enumerate(document.sentences)
            ]
            for document, document_id in zip(parsed, ids)
        ]

    @staticmethod
    def _convert(sentence, sentence_id: str, text: str | None) -> ParsedSentence:
        # stanza's decoder returns trees; a broken one is repaired in place like any backend's, not dropped.
        words = sentence.words
        heads, relations = repair_heads(
            [w.head if w.head is not None else 0 for w in words], [w.deprel or "_" for w in words]
        )
        for word, head, relation in zip(words, heads, relations):
            word.head, word.deprel = head, relation
        parsed = from_stanza_sentence(sentence, sentence_id)
        parsed.text = text or " ".join(parsed.tokens)
        return add_constituency(parsed)
