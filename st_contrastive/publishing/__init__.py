"""Publishing runs to the Hugging Face Hub: the model card written from a run's results, and the upload."""

from st_contrastive.publishing.model_card import model_card
from st_contrastive.publishing.upload import check_repo_id, prepare_upload, push

__all__ = ["check_repo_id", "model_card", "prepare_upload", "push"]
