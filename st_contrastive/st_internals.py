"""The private parts of sentence-transformers this package uses, in one place, so that an upgrade that moves them
breaks here, with a message naming the symbol and the installed version, and not deep inside a training step.

Checked against sentence-transformers 6.2.0 (transformers 5.24.0 is used through public names only).
``tests/test_st_internals.py`` checks each symbol's presence, its parameters and the behaviour the package relies on,
and fails naming the symbol and the installed version; update this module (and only it) when it does.

- ``_create_minibatch`` (``sentence_transformers.base.losses.gradcache``): GradCache's slicing of a batch's features
  into a mini-batch, which also drops trailing padding columns shared by the whole mini-batch (so a short mini-batch
  is not embedded at the full width) and handles flattened and multi-modal inputs. ``CachedDeCLUTRLoss`` slices its
  MLM labels to the width it returns, so that trimming is part of what it relies on.
- ``_ddp_replay_context``: whether a mini-batch's re-embedding in GradCache's second pass synchronizes gradients under
  DDP (only the last one does; static-graph DDP needs every one to). Reimplementing it would mean reading DDP's own
  private state.

``RandContext`` and ``CachedLossMixin``, from the same module, are public (exported by
``sentence_transformers.base.losses``) and imported from there.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from dataclasses import dataclass

CHECKED_VERSION = "6.2.0"


@dataclass(frozen=True)
class PrivateSymbol:
    """A name this package imports from sentence-transformers that is not part of its public API, and the
    parameters it was checked with."""

    module: str
    name: str
    parameters: tuple[str, ...]

    @property
    def qualified_name(self) -> str:
        return f"{self.module}.{self.name}"


GRADCACHE = "sentence_transformers.base.losses.gradcache"
CREATE_MINIBATCH = PrivateSymbol(GRADCACHE, "_create_minibatch", ("sentence_feature", "begin", "end"))
DDP_REPLAY_CONTEXT = PrivateSymbol(GRADCACHE, "_ddp_replay_context", ("model", "synchronize"))
PRIVATE_SYMBOLS = (CREATE_MINIBATCH, DDP_REPLAY_CONTEXT)


def installed_version() -> str:
    return importlib.metadata.version("sentence-transformers")


def resolve(symbol: PrivateSymbol) -> object:
    """The object ``symbol`` names, or an ImportError naming it and the installed sentence-transformers version."""
    try:
        return getattr(importlib.import_module(symbol.module), symbol.name)
    except (ImportError, AttributeError) as error:
        raise ImportError(
            f"st-contrastive needs {symbol.qualified_name}, which sentence-transformers "
            f"{installed_version()} does not have (checked against {CHECKED_VERSION}): "
            f"update st_contrastive/st_internals.py or install sentence-transformers=={CHECKED_VERSION}"
        ) from error


create_minibatch = resolve(CREATE_MINIBATCH)
ddp_replay_context = resolve(DDP_REPLAY_CONTEXT)
