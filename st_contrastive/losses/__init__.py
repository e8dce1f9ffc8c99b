"""Losses for sentence-transformers' trainer; the math they share is in ``st_contrastive.losses.contrastive_core``."""

from st_contrastive.losses.cached_declutr import CachedDeCLUTRLoss
from st_contrastive.losses.cached_supcon import CachedNLISupConLoss, CachedSupConLoss
from st_contrastive.losses.declutr import DeCLUTRLoss
from st_contrastive.losses.multiview_bilinear import MultiViewBilinearLoss
from st_contrastive.losses.nli_supcon import NLISupConLoss
from st_contrastive.losses.nt_xent import nt_xent
from st_contrastive.losses.scale import SCALeLoss
from st_contrastive.losses.supcon import SupConLoss

__all__ = [
    "CachedDeCLUTRLoss",
    "CachedNLISupConLoss",
    "CachedSupConLoss",
    "DeCLUTRLoss",
    "MultiViewBilinearLoss",
    "NLISupConLoss",
    "SCALeLoss",
    "SupConLoss",
    "nt_xent",
]
