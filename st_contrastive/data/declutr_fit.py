"""Deprecated module path: use ``st_contrastive.data.declutr_input_examples`` (or ``st_contrastive.data``)."""

import warnings

from st_contrastive.data.declutr_input_examples import declutr_input_examples

warnings.warn("st_contrastive.data.declutr_fit is now st_contrastive.data.declutr_input_examples",
              DeprecationWarning, stacklevel=2)

__all__ = ["declutr_input_examples"]
