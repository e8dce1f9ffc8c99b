"""SpanSampler: lengths, Beta means, placements, anchor gaps, seeding, short documents."""

import itertools

import numpy as np
import pytest

from st_contrastive.data import Span, SpanSampler, placement


def sample_many(sampler, num_tokens, times, seed=0):
    rng = np.random.default_rng(seed)
    return [sampler.sample(num_tokens, rng) for _ in range(times)]


def test_lengths_within_bounds_and_beta_means():
    sampler = SpanSampler(num_anchors=2, num_positives=2, min_length=32, max_length=512)
    draws = sample_many(sampler, 4096, 2000)
    anchors = np.array([len(s.anchor) for doc in draws for s in doc])
    positives = np.array([len(p) for doc in draws for s in doc for p in s.positives])
    assert anchors.min() >= 32 and anchors.max() <= 512
    assert positives.min() >= 32 and positives.max() <= 512
    # E[floor(p·480 + 32)] ≈ 480·E[p] + 31.5 with E[Beta(4,2)] = 2/3 and E[Beta(2,4)] = 1/3.
    assert anchors.mean() == pytest.approx(480 * 2 / 3 + 31.5, abs=5)
    assert positives.mean() == pytest.approx(480 / 3 + 31.5, abs=5)


def test_anchors_disjoint_in_order_and_gap_apart():
    sampler = SpanSampler(num_anchors=3, num_positives=1, min_length=8, max_length=64)
    for doc in sample_many(sampler, 384, 500):
        spans = [s.anchor for s in doc]
        assert all(0 <= s.start < s.end <= 384 for s in spans)
        for left, right in itertools.pairwise(spans):
            assert right.start - left.end >= 64


def test_positives_stay_in_document_and_never_cover_a_sibling_anchor():
    sampler = SpanSampler(num_anchors=2, num_positives=4, min_length=8, max_length=64)
    for doc in sample_many(sampler, 256, 500):
        for i, spans in enumerate(doc):
            for p in spans.positives:
                assert 0 <= p.start < p.end <= 256
                assert placement(spans.anchor, p) != "disjoint"
                for j, other in enumerate(doc):
                    if j != i:
                        assert p.end <= other.anchor.start or p.start >= other.anchor.end


@pytest.mark.parametrize(
    ("strategy", "kinds"),
    [("default", {"adjacent", "subsumed", "overlapping"}), ("adjacent", {"adjacent"}), ("subsuming", {"subsumed"})],
)
def test_each_strategy_gives_its_placements(strategy, kinds):
    sampler = SpanSampler(num_anchors=1, num_positives=2, min_length=4, max_length=16, strategy=strategy)
    seen = {placement(s.anchor, p) for doc in sample_many(sampler, 64, 3000) for s in doc for p in s.positives}
    assert seen == kinds


def test_placement_kinds():
    anchor = Span(10, 20)
    assert placement(anchor, Span(20, 25)) == "adjacent"
    assert placement(anchor, Span(5, 10)) == "adjacent"
    assert placement(anchor, Span(12, 18)) == "subsumed"
    assert placement(anchor, Span(15, 25)) == "overlapping"
    assert placement(anchor, Span(30, 35)) == "disjoint"


def test_seeded_reproducibility_and_fresh_draws():
    sampler = SpanSampler(max_length=64, min_length=8)
    assert sample_many(sampler, 1000, 5, seed=7) == sample_many(sampler, 1000, 5, seed=7)
    first, second = sample_many(sampler, 1000, 2, seed=7)
    assert first != second
    assert SpanSampler(seed=3, max_length=64).sample(1000) == SpanSampler(seed=3, max_length=64).sample(1000)


def test_short_document_error_names_the_document():
    sampler = SpanSampler(num_anchors=2, max_length=64, short_documents="error")
    with pytest.raises(ValueError, match=r"row 1 \(id='b'\) with 100 tokens.*need 256"):
        sampler.select_documents([300, 100, 50], ["row 0 (id='a')", "row 1 (id='b')", "row 2 (id='c')"])
    with pytest.raises(ValueError, match="too short"):
        sampler.sample(100)


def test_short_documents_are_skipped_and_counted_by_default(caplog):
    # The paper's corpus held only documents of 2·A·ℓmax tokens or more: skipping is the default.
    sampler = SpanSampler(num_anchors=2, max_length=64)
    with caplog.at_level("WARNING"):
        assert sampler.select_documents([300, 100, 256, 50]) == [0, 2]
    assert "Skipped 2 of 4 documents shorter than 256 tokens" in caplog.text


def test_messages_name_the_setting_as_the_argument_to_change(caplog):
    strict = SpanSampler(max_length=64, short_documents="error")
    with pytest.raises(ValueError) as error:
        strict.select_documents([300, 100])
    skip, shrink = "short_documents='skip'", "short_documents='shrink'"
    assert f"Lower max_length=64, or pass {skip} to drop them, or {shrink} to scale" in str(error.value)
    with pytest.raises(ValueError) as error:
        SpanSampler(max_length=64).select_documents([10, 20])
    assert str(error.value).endswith(f"Lower max_length=64, or pass {shrink}.")
    with caplog.at_level("WARNING"):
        SpanSampler(max_length=64).select_documents([300, 100])
    assert f"{shrink} keeps them with shorter spans" in caplog.text


def test_short_documents_shrink_scales_lengths():
    sampler = SpanSampler(num_anchors=2, num_positives=2, min_length=32, max_length=512, short_documents="shrink")
    assert sampler.lengths_for(400) == (32, 100, 100)
    assert sampler.lengths_for(5000) == (32, 512, 512)
    for doc in sample_many(sampler, 400, 200):
        for s in doc:
            assert len(s.anchor) <= 100 and all(len(p) <= 100 and 0 <= p.start and p.end <= 400 for p in s.positives)
    with pytest.raises(ValueError, match="too short"):
        sampler.select_documents([3])


def test_wider_gap_keeps_positives_of_different_anchors_apart():
    sampler = SpanSampler(num_anchors=2, num_positives=3, min_length=8, max_length=32, min_anchor_gap=64)
    for doc in sample_many(sampler, 128, 500):
        first, second = doc
        assert max(p.end for p in first.positives) <= min(p.start for p in second.positives)


def test_bad_arguments():
    with pytest.raises(ValueError, match="strategy"):
        SpanSampler(strategy="nearby")
    with pytest.raises(ValueError, match=r"max_length=32: must be at least the shortest span length \(64\)"):
        SpanSampler(min_length=64, max_length=32)
    with pytest.raises(ValueError, match="short_documents"):
        SpanSampler(short_documents="pad")
    with pytest.raises(ValueError, match=r"anchor_beta=\(0, 2\): needs two values above 0"):
        SpanSampler(anchor_beta=(0, 2))


def test_required_length_follows_the_anchor_gap():
    # Three anchors of up to 32 tokens, 64 apart, need 3·32 + 2·64 = 224 tokens, more than the paper's 2·A·ℓmax = 192.
    sampler = SpanSampler(num_anchors=3, num_positives=1, min_length=8, max_length=32, min_anchor_gap=64)
    assert sampler.min_document_length == 224
    rng = np.random.default_rng(0)
    for _ in range(300):  # at exactly the required length, no draw fails
        sampler.sample(224, rng)
    with pytest.raises(ValueError, match="row 1 with 200 tokens, but 3 anchors of up to 32 tokens, at least 64 apart"):
        SpanSampler(
            num_anchors=3, num_positives=1, min_length=8, max_length=32, min_anchor_gap=64, short_documents="error"
        ).select_documents([224, 200])
    assert SpanSampler(num_anchors=3, max_length=32).min_document_length == 192  # default gap: the paper's length
    with pytest.raises(ValueError, match="min_anchor_gap=-1: must be at least 0"):
        SpanSampler(min_anchor_gap=-1)


def test_shrink_scales_the_gap_with_the_spans():
    sampler = SpanSampler(
        num_anchors=3, num_positives=1, min_length=8, max_length=32, min_anchor_gap=64, short_documents="shrink"
    )
    rng = np.random.default_rng(1)
    for num_tokens in (7, 8, 50, 100, 223):
        _, max_length, gap = sampler.lengths_for(num_tokens)
        assert 3 * max_length + 2 * gap <= num_tokens
        for _ in range(50):
            sampler.sample(num_tokens, rng)
    assert sampler.is_too_short(6) and not sampler.is_too_short(7)  # 7 tokens still give 1-token spans


def test_every_document_skipped_is_an_error():
    sampler = SpanSampler(max_length=32, short_documents="skip")
    with pytest.raises(ValueError, match="all 2 documents are too short"):
        sampler.select_documents([10, 20])
