"""Publishing runs to the Hugging Face Hub: the model card every run folder gets from its results, and the upload."""

from st_contrastive.publishing.card_metadata import card_metadata, fill_model_card_data
from st_contrastive.publishing.model_card import model_card, write_model_card
from st_contrastive.publishing.upload import check_repo_id, prepare_upload, push

__all__ = [
    "card_metadata",
    "check_repo_id",
    "fill_model_card_data",
    "model_card",
    "prepare_upload",
    "push",
    "write_model_card",
]
