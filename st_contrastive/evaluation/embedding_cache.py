"""Encode each distinct sentence once, even when several tasks share sentences (SST-2 is inside SST-5)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class EmbeddingCache:
    """Frozen sentence embeddings of one model, computed on first request and reused afterwards.

    Only valid while the model's weights do not change: evaluators build a new cache on every call.
    """

    def __init__(self, model, batch_size: int = 32, show_progress_bar: bool = False):
        self.model = model
        self.batch_size = batch_size
        self.show_progress_bar = show_progress_bar
        self._vectors: dict[str, np.ndarray] = {}
        self.truncate_dim: int | None = None

    def truncated(self, dim: int) -> EmbeddingCache:
        """The same embeddings cut to their first ``dim`` dimensions (what ``truncate_dim`` gives), sharing what this
        cache has encoded: scoring a Matryoshka model at several sizes encodes each sentence once."""
        view = EmbeddingCache(self.model, self.batch_size, self.show_progress_bar)
        view._vectors, view.truncate_dim = self._vectors, dim
        return view

    def __len__(self) -> int:
        return len(self._vectors)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of ``texts`` in order, shape ``(len(texts), dim)``, float32."""
        missing = list(dict.fromkeys(text for text in texts if text not in self._vectors))
        if missing:
            vectors = self.model.encode(
                missing,
                batch_size=self.batch_size,
                show_progress_bar=self.show_progress_bar,
                convert_to_numpy=True,
            )
            self._vectors.update(zip(missing, vectors.astype(np.float32)))
        if not texts:
            return np.zeros((0, self.truncate_dim or self.model.get_embedding_dimension() or 0), dtype=np.float32)
        return np.stack([self._vectors[text][: self.truncate_dim] for text in texts])
