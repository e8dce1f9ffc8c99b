"""Readers, samplers and collators that turn public data into training batches.

The names below load on first use (PEP 562), so that a command can import a torch-free module of this package, such
as ``span_sampler``, to check its options without importing torch.
"""

import importlib

_EXPORTS = {
    "ClassBalancedBatchSampler": "class_balanced_sampler",
    "ContextBlockBatchSampler": "context_block_sampler",
    "DeCLUTRDataCollator": "declutr_collator",
    "longest_span": "declutr_collator",
    "prepare_declutr_dataset": "declutr_collator",
    "declutr_input_examples": "declutr_input_examples",
    "SHARED_CORPORA": "documents",
    "load_corpus": "documents",
    "load_documents": "documents",
    "tokenize_documents": "documents",
    "load_nli": "nli",
    "PremiseGroupDataCollator": "premise_group_collator",
    "PremiseGroupBatchSampler": "premise_group_sampler",
    "load_sentence_corpus": "sentence_corpus",
    "AnchorSpans": "span_sampler",
    "Span": "span_sampler",
    "SpanSampler": "span_sampler",
    "placement": "span_sampler",
}

__all__ = [
    "SHARED_CORPORA",
    "AnchorSpans",
    "ClassBalancedBatchSampler",
    "ContextBlockBatchSampler",
    "DeCLUTRDataCollator",
    "PremiseGroupBatchSampler",
    "PremiseGroupDataCollator",
    "Span",
    "SpanSampler",
    "declutr_input_examples",
    "load_corpus",
    "load_documents",
    "load_nli",
    "load_sentence_corpus",
    "longest_span",
    "placement",
    "prepare_declutr_dataset",
    "tokenize_documents",
]


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
