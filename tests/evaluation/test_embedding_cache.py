"""EmbeddingCache: each distinct sentence is encoded once, whatever asks for it."""

import numpy as np

from st_contrastive.evaluation.embedding_cache import EmbeddingCache


def test_embedding_cache_encodes_each_sentence_once(tiny_model):
    cache = EmbeddingCache(tiny_model, batch_size=8)
    vectors = cache.encode(["a cat", "a dog", "a cat"])
    assert len(cache) == 2 and vectors.shape[0] == 3
    np.testing.assert_array_equal(vectors[0], vectors[2])
    again = cache.encode(["a dog"])
    assert len(cache) == 2
    np.testing.assert_array_equal(again[0], vectors[1])
