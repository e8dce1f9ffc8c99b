"""A dataset file edited under a run is refused naming its rows (st_contrastive/active/dataset_fingerprint.py)."""

from __future__ import annotations

import pytest

from st_contrastive.active.dataset_fingerprint import FILE, check_unchanged


def test_the_first_start_records_and_a_later_one_compares(tmp_path):
    texts = [f"text {i}" for i in range(10)]
    check_unchanged(tmp_path, "mine.csv", texts)
    assert (tmp_path / FILE).is_file()
    check_unchanged(tmp_path, "mine.csv", list(texts))  # the same file: nothing to say
    edited = [*texts[:3], "another text", *texts[4:7], "and another", *texts[8:]]
    with pytest.raises(ValueError, match=r"mine.csv changed since the run .* \(train rows 3, 7 hold other texts\)"):
        check_unchanged(tmp_path, "mine.csv", edited)
    with pytest.raises(ValueError, match=r"it has 11 train rows, not 10"):
        check_unchanged(tmp_path, "mine.csv", [*texts, "a new row"])
