"""Contrastive objectives for sentence-transformers: DeCLUTR, SupCon + CE, multi-view encoders, SCALe."""

__version__ = "0.1.0"
