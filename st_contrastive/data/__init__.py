"""Readers, samplers and collators that turn public data into training batches."""

from st_contrastive.data.class_balanced_sampler import ClassBalancedBatchSampler
from st_contrastive.data.context_block_sampler import ContextBlockBatchSampler
from st_contrastive.data.declutr_collator import DeCLUTRDataCollator, prepare_declutr_dataset
from st_contrastive.data.declutr_input_examples import declutr_input_examples
from st_contrastive.data.documents import SHARED_CORPORA, load_corpus, load_documents, tokenize_documents
from st_contrastive.data.masking import IGNORE_INDEX, mask_tokens
from st_contrastive.data.nli import load_nli
from st_contrastive.data.premise_group_collator import PremiseGroupDataCollator
from st_contrastive.data.premise_group_sampler import PremiseGroupBatchSampler
from st_contrastive.data.sentence_corpus import load_sentence_corpus
from st_contrastive.data.span_sampler import AnchorSpans, Span, SpanSampler, placement

__all__ = [
    "IGNORE_INDEX",
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
    "mask_tokens",
    "placement",
    "prepare_declutr_dataset",
    "tokenize_documents",
]
