"""STS evaluation: the loaders on the real shared files and local folders, the scoring math, the evaluator."""

import json

import numpy as np
import pytest

from st_contrastive.evaluation.sts import cosine_spearman, load_sts, sts_evaluator, sts_spearman


def test_cosine_spearman_matches_hand_computed_value():
    # Cosines 0.1, 0.3, 0.9, 0.5 rank 1, 2, 4, 3 against gold ranks 1, 2, 3, 4:
    # rho = 1 - 6 * (1 + 1) / (4 * (16 - 1)) = 0.8. Vector norms differ on purpose: only the angle may count.
    cosines = np.array([0.1, 0.3, 0.9, 0.5])
    embeddings1 = np.tile([3.0, 0.0], (4, 1))
    embeddings2 = np.stack([cosines, np.sqrt(1 - cosines**2)], axis=1) * np.array([[1.0], [2.0], [0.5], [7.0]])
    assert cosine_spearman(embeddings1, embeddings2, [0.0, 1.5, 2.0, 4.8]) == pytest.approx(80.0)
    assert cosine_spearman(embeddings1, embeddings2, [0.0, 1.0, 5.0, 3.0]) == pytest.approx(100.0)


def test_load_sts_reads_full_files_and_leading_quotes():
    s1, s2, scores = load_sts("stsb", "test")
    assert len(s1) == len(s2) == len(scores) == 1379
    assert min(scores) >= 0 and max(scores) <= 5
    # File line 893: both sentences start with a literal quote; QUOTE_MINIMAL would merge fields here.
    assert s1[891].startswith('"We believe we are fully prepared') and s1[891].endswith("chairman.")
    assert s2[891].startswith('"We believe') and scores[891] == 3.75

    s1, s2, scores = load_sts("sick", "test")
    assert len(scores) == 4927
    assert min(scores) >= 1 and max(scores) <= 5
    assert [len(load_sts("stsb", split)[2]) for split in ("train", "dev")] == [5749, 1500]
    assert [len(load_sts("sick", split)[2]) for split in ("train", "dev")] == [4500, 500]
    assert load_sts("sick", "test", max_rows=7)[0] == s1[:7]


def test_load_sts_from_local_dataset_directory(tmp_path):
    rows = [{"sentence1": f"a {i}", "sentence2": f"b {i}", "score": i / 2} for i in range(5)]
    (tmp_path / "validation.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    s1, _, scores = load_sts(str(tmp_path), "dev")  # "dev" finds the Hub-style "validation" split
    assert s1 == [r["sentence1"] for r in rows] and scores == [r["score"] for r in rows]


def test_unknown_sts_task_and_split_raise():
    with pytest.raises(ValueError, match="stsb, sick"):
        load_sts("sts12", "test")
    with pytest.raises(ValueError, match="train, dev, test"):
        load_sts("stsb", "validation")


def test_sts_spearman_and_st_evaluator_agree(tiny_model):
    s1, s2, scores = load_sts("stsb", "dev", max_rows=40)
    ours = sts_spearman(tiny_model, s1, s2, scores, batch_size=16)
    reference = cosine_spearman(tiny_model.encode(s1), tiny_model.encode(s2), scores)
    assert ours == pytest.approx(reference, abs=0.5)

    evaluator = sts_evaluator("stsb", "dev", max_rows=40, batch_size=16)
    metrics = evaluator(tiny_model)
    assert evaluator.primary_metric == "sts-b-dev_spearman_cosine"
    assert set(metrics) == {"sts-b-dev_pearson_cosine", "sts-b-dev_spearman_cosine"}
    assert metrics["sts-b-dev_spearman_cosine"] == pytest.approx(ours / 100, abs=0.005)


def test_sts_spearman_equals_mteb_cosine_spearman(tiny_model):
    """MTEB (the field's benchmark, the docs' example) scores the same pairs to the same cosine Spearman."""
    from datasets import Dataset, DatasetDict
    from mteb import evaluate
    from mteb.abstasks.sts import AbsTaskSTS
    from mteb.abstasks.task_metadata import TaskMetadata

    s1, s2, scores = load_sts("stsb", "dev", max_rows=60)

    class SixtyPairs(AbsTaskSTS):
        min_score, max_score = 0, 5
        metadata = TaskMetadata(
            name="SixtyPairs",
            description="The first 60 STS-B dev pairs.",
            dataset={"path": "local", "revision": "local"},
            type="STS",
            eval_splits=["test"],
            eval_langs=["eng-Latn"],
            main_score="cosine_spearman",
        )

        def load_data(self, **kwargs) -> None:
            self.dataset = DatasetDict({"test": Dataset.from_dict({"sentence1": s1, "sentence2": s2, "score": scores})})
            self.data_loaded = True

    (result,) = evaluate(tiny_model, [SixtyPairs()], cache=None, show_progress_bar=False).task_results
    ours = sts_spearman(tiny_model, s1, s2, scores, batch_size=16)
    assert 100 * result.get_score() == pytest.approx(ours, abs=1e-3)
    assert abs(ours) > 1  # a random tiny model, yet not a constant embedding: the comparison has something to agree on
