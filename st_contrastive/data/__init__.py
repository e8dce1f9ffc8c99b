from st_contrastive.data.data_dir import data_dir, data_file
from st_contrastive.data.declutr_collator import DeCLUTRDataCollator, prepare_declutr_dataset
from st_contrastive.data.documents import load_documents, tokenize_documents
from st_contrastive.data.span_sampler import AnchorSpans, Span, SpanSampler, placement

__all__ = [
    "AnchorSpans",
    "DeCLUTRDataCollator",
    "Span",
    "SpanSampler",
    "data_dir",
    "data_file",
    "load_documents",
    "placement",
    "prepare_declutr_dataset",
    "tokenize_documents",
]
