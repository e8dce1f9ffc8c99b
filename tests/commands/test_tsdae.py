"""TSDAE's noise: words deleted at the ratio, one kept at least, the same for the same seed."""

import random

from st_contrastive.commands.tsdae import delete_words


def test_words_are_deleted_at_the_ratio_and_one_is_always_kept():
    rng = random.Random(0)
    sentence = " ".join(f"w{i}" for i in range(40))
    kept = [len(delete_words(sentence, 0.6, rng).split()) for _ in range(500)]
    assert 0.37 < sum(kept) / (500 * 40) < 0.43  # 40 % of the words kept on average
    assert all(delete_words("one two three", 0.999, rng) in ("one", "two", "three") for _ in range(50))
    assert delete_words("", 0.6, rng) == ""
    assert delete_words(sentence, 0.6, random.Random(1)) == delete_words(sentence, 0.6, random.Random(1))
