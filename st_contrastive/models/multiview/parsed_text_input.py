"""The input module of multi-view models: sentences (raw or pre-parsed) to word ids and tree structure tensors."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import torch
from sentence_transformers.base.modules import InputModule

from st_contrastive.models.multiview.tree_batch import TreeBatch, inner_children
from st_contrastive.models.multiview.vocabulary import Vocabulary
from st_contrastive.parsing import ParsedSentence, binarize, project_heads
from st_contrastive.parsing.parse_cache import ParseCache

# Written into config_sentence_transformers.json so that loading without the plugin says what to install.
PLUGIN_REQUIREMENT = {
    "st-contrastive": {"specifier": ">=0.1.0", "reason": "multi-view models are made of st_contrastive modules"}
}


class ParsedTextInput(InputModule):
    """Turns sentences into what the view encoders read: padded word ids, dependency heads and binary trees.

    An input is a raw string, a :class:`~st_contrastive.parsing.ParsedSentence`, its ``to_dict()``, or
    ``{"id": ID}``: the parse added with :meth:`add_parses` under that sentence id (what
    :func:`~st_contrastive.data.load_sentence_corpus` puts in its dataset, so every sentence trains on its own
    parse, whatever its text). Strings are looked up in :attr:`parses` (pre-parsed text, e.g. a ``st-contrastive
    parse`` cache added with :meth:`add_parses`) and otherwise parsed on the fly with ``parser`` (a spec for
    :func:`~st_contrastive.parsing.make_parser`), so ``model.encode(["A sentence."])`` just works. A sentence
    without a constituency tree gets one by head projection; trees are binarized for the binary Tree-LSTM.

    Features: ``input_ids`` and ``attention_mask`` ``(batch, words)``; ``lengths``, the word counts as a list;
    ``token_ids``, every sentence's word ids one after another (the trees' nodes index them); and
    ``dependency_trees`` and ``constituency_trees``, each a :class:`~st_contrastive.models.multiview.TreeBatch`.
    The trees and lengths are built here, on the host where the batch is prepared, so that the view encoders
    never read the batch back from the device (a wait for the GPU on every step).
    """

    config_keys: ClassVar[list[str]] = ["parser", "lowercase"]

    def __init__(self, vocabulary: Vocabulary, parser: str | None = "spacy", lowercase: bool = False) -> None:
        super().__init__()
        self.vocabulary, self.parser, self.lowercase = vocabulary, parser, lowercase
        self.parses: dict[str, ParsedSentence] = {}  # by text, for raw strings
        self.parses_by_id: dict[str, ParsedSentence] = {}  # by sentence id, for {"id": ...} references
        self.parse_cache: ParseCache | None = None
        self._parser = None

    def add_parses(self, sentences: Iterable[ParsedSentence]) -> None:
        """Keep these parses under their ids, for ``{"id": ...}`` inputs, and under their texts, so a raw string
        equal to one is not parsed again. Identical texts keep their own parses through their ids (a raw string
        gets the first one added); a sentence without text (read from CoNLL-U) is reachable by its id only. Two
        different parses under one id are a ValueError naming it."""
        for sentence in sentences:
            if sentence.id:
                known = self.parses_by_id.setdefault(sentence.id, sentence)
                if known is not sentence and known != sentence:
                    raise ValueError(f"two different parses have the sentence id {sentence.id!r}: ids must be unique")
            if sentence.text:
                self.parses.setdefault(sentence.text, sentence)

    def cache_parses_in(self, path: str | Path) -> None:
        """Keep the parses of new texts in a jsonl.gz at ``path`` and read them back from it, so later models
        (evaluation sets) do not parse them again."""
        self.parse_cache = ParseCache(path)

    def parse(self, texts: list[str]) -> list[ParsedSentence]:
        """The parses of ``texts``: from :attr:`parses` where known, the others with the configured parser,
        through :attr:`parse_cache` when set (else not kept: memory stays bounded however much text is encoded)."""
        known = self.parses
        missing = sorted({t for t in texts if t not in known})
        if missing:
            if self.parser is None:
                raise ValueError(
                    f"no parse for {missing[0][:80]!r} and this model has no parser: pass parsed "
                    "sentences, add_parses(...) first, or set ParsedTextInput.parser (e.g. 'spacy')"
                )
            if self._parser is None:
                from st_contrastive.parsing import make_parser

                self._parser = make_parser(self.parser)
            parsed = (
                self.parse_cache.parse(missing, self._parser)
                if self.parse_cache is not None
                else self._parser.parse(missing)
            )
            known = {**known, **dict(zip(missing, parsed, strict=True))}
        return [known[t] for t in texts]

    def preprocess(
        self, inputs: Sequence[str | dict | ParsedSentence], prompt: str | None = None, **kwargs
    ) -> dict[str, torch.Tensor | Any]:
        texts = [x for x in inputs if isinstance(x, str)]
        parsed_texts = iter(self.parse(texts)) if texts else iter(())
        sentences = []
        for x in inputs:
            if isinstance(x, str):
                sentences.append(next(parsed_texts))
            elif isinstance(x, ParsedSentence):
                sentences.append(x)
            elif isinstance(x, dict) and "tokens" not in x and "id" in x:
                sentences.append(self.added_parse(x["id"]))
            elif isinstance(x, dict):
                sentences.append(ParsedSentence.from_dict(x))
            else:
                raise TypeError(f"a multi-view model reads strings or parsed sentences, not {type(x).__name__}")
        return self.features(sentences)

    def added_parse(self, sentence_id: str) -> ParsedSentence:
        """The parse added under ``sentence_id``."""
        found = self.parses_by_id.get(sentence_id)
        if found is None:
            raise ValueError(
                f"no parse was added with the sentence id {sentence_id!r}: add_parses(...) the parsed "
                "corpus the dataset was loaded from"
            )
        return found

    def features(self, sentences: list[ParsedSentence]) -> dict[str, Any]:
        lengths = [len(s.tokens) for s in sentences]  # a ParsedSentence has at least one token
        input_ids = torch.zeros(len(sentences), max(lengths), dtype=torch.long)
        binary_trees = []
        for row, sentence in enumerate(sentences):
            tokens = [t.lower() for t in sentence.tokens] if self.lowercase else sentence.tokens
            input_ids[row, : lengths[row]] = torch.tensor(self.vocabulary.encode(tokens))
            tree = sentence.constituency if sentence.constituency is not None else project_heads(sentence)
            binary_trees.append(inner_children(binarize(tree), lengths[row]))
        attention_mask = (torch.arange(max(lengths))[None, :] < torch.tensor(lengths)[:, None]).long()
        return {
            "input_ids": input_ids,
            "attention_mask": attention_mask,
            "lengths": lengths,
            "token_ids": input_ids[attention_mask.bool()],
            "dependency_trees": TreeBatch.from_heads([s.heads for s in sentences]),
            "constituency_trees": TreeBatch.from_binary_children(binary_trees, lengths),
        }

    def forward(self, features: dict[str, torch.Tensor], **kwargs) -> dict[str, torch.Tensor]:
        return features  # the view encoders embed the words: each view has its own embeddings

    def save(self, output_path: str, *args, safe_serialization: bool = True, **kwargs) -> None:
        os.makedirs(output_path, exist_ok=True)
        self.save_config(output_path)
        self.vocabulary.save(output_path)
        # The model's config file is written before its modules, so the root input module can add the plugin
        # requirement: every save (model.save, trainer checkpoints, push_to_hub) then carries it.
        model_config = os.path.join(output_path, "config_sentence_transformers.json")
        if os.path.exists(model_config):
            with open(model_config, encoding="utf8") as f:
                config = json.load(f)
            config["requirements"] = {**config.get("requirements", {}), **PLUGIN_REQUIREMENT}
            with open(model_config, "w", encoding="utf8") as f:
                json.dump(config, f, indent=2, sort_keys=True)

    @classmethod
    def load(
        cls,
        model_name_or_path: str,
        subfolder: str = "",
        token: bool | str | None = None,
        cache_folder: str | None = None,
        revision: str | None = None,
        local_files_only: bool = False,
        **kwargs,
    ) -> ParsedTextInput:
        hub_kwargs = {
            "subfolder": subfolder,
            "token": token,
            "cache_folder": cache_folder,
            "revision": revision,
            "local_files_only": local_files_only,
        }
        config = cls.load_config(model_name_or_path, **hub_kwargs)
        vocab_file = cls.load_file_path(model_name_or_path, "vocab.txt", **hub_kwargs)
        if vocab_file is None:
            raise FileNotFoundError(f"{model_name_or_path}: no vocab.txt of a saved {cls.__name__}")
        return cls(Vocabulary.load(os.path.dirname(vocab_file)), **config)
