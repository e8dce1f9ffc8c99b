from st_contrastive.losses.declutr import DeCLUTRLoss
from st_contrastive.losses.nt_xent import nt_xent

__all__ = ["DeCLUTRLoss", "nt_xent"]
