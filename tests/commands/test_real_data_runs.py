"""Short real runs on the shared data with all-MiniLM-L6-v2 (minutes on 2 cores): `pytest -m slow`."""

from dataclasses import replace

import numpy as np
import pytest
from sentence_transformers import SentenceTransformer

from st_contrastive.commands.declutr import DeCLUTRConfig, train_declutr
from st_contrastive.commands.supcon import SupConNLIConfig, train_supcon_nli
from st_contrastive.data import load_nli
from st_contrastive.default_model import default_model
from st_contrastive.evaluation import evaluate_model
from st_contrastive.models import load_nli_classifier, predict_nli

pytestmark = pytest.mark.slow


def test_declutr_on_wikipedia_learns_and_keeps_sts(tmp_path):
    config = DeCLUTRConfig(
        max_rows=200, max_span_length=64, min_span_length=16, eval_tasks=["stsb-dev"], output=str(tmp_path / "declutr")
    )
    results = train_declutr(replace(config, training=replace(config.training, max_steps=40, batch_size=4)))
    assert results["train"]["steps"] == 40
    before, after = results["before"]["stsb-dev"]["spearman"], results["after"]["stsb-dev"]["spearman"]
    assert after > before - 3, (before, after)  # continued pretraining must not wreck a sentence-tuned model
    # The saved checkpoint, loaded by vanilla sentence-transformers, is the model that was evaluated.
    reloaded = SentenceTransformer(str(tmp_path / "declutr"), device="cpu")
    assert evaluate_model(reloaded, ["stsb-dev"])["stsb-dev"]["spearman"] == pytest.approx(after, abs=1e-4)


def test_supcon_on_snli_trains_a_head_that_beats_chance(tmp_path):
    base = SentenceTransformer(default_model(), device="cpu")
    SentenceTransformer(modules=list(base)[:-1], device="cpu").save(str(tmp_path / "meanpool"))  # no Normalize
    config = SupConNLIConfig(
        model=str(tmp_path / "meanpool"),
        dataset="snli-dev",
        max_rows=2048,
        eval_tasks=["stsb-dev"],
        output=str(tmp_path / "supcon"),
    )
    results = train_supcon_nli(replace(config, training=replace(config.training, max_steps=30, learning_rate=1e-4)))
    assert results["train"]["anchors_seen"] > results["train"]["anchors_without_positive"]
    test = load_nli("snli-test", max_rows=600)
    model = SentenceTransformer(str(tmp_path / "supcon"), device="cpu")
    predicted = predict_nli(
        model, load_nli_classifier(tmp_path / "supcon" / "nli_head"), test["premise"], test["hypothesis"]
    )
    names = ["entailment", "neutral", "contradiction"]
    accuracy = np.mean([names.index(p) == gold for p, gold in zip(predicted, test["label"])])
    assert accuracy > 0.45, accuracy  # chance is 1/3; measured 0.55 after these 30 steps


def test_scale_active_learning_on_trec_learns_and_its_saved_head_predicts_what_was_scored(tmp_path):
    from st_contrastive.active import ActiveLearningConfig, ArmState, run_active_learning
    from st_contrastive.data.text_classification import load_text_classification
    from st_contrastive.models import LabelClassifier
    from st_contrastive.scale import RoundTraining

    config = ActiveLearningConfig(
        dataset="trec",
        objectives=["supcon-ce"],
        acquisitions=["entropy"],
        num_seeds=1,
        pool_size=600,
        test_size=200,
        initial=0.05,
        step=0.05,
        budget=0.1,
        output=str(tmp_path / "al"),
        training=RoundTraining(epochs=3, from_base_epochs=3, min_steps_per_class=0),
    )
    rows = run_active_learning(config, progress=False)
    assert [r["labelled"] for r in rows] == [30, 60]
    assert rows[-1]["accuracy"] > 40, rows  # 6 classes, the largest is 23 % of the test split
    arm = tmp_path / "al" / "arms" / "supcon-ce-entropy-seed0"
    assert len(ArmState.load(arm).labelled) == 60
    data = load_text_classification("trec").subset_test(200, seed=0)
    model = SentenceTransformer(str(arm / "model"), device="cpu")
    head = LabelClassifier.load(str(arm / "model" / "classifier"))
    predicted = head.predict_proba(model.encode(data.test_texts)).argmax(axis=1)
    assert 100 * np.mean(predicted == np.array(data.test_labels)) == pytest.approx(rows[-1]["accuracy"], abs=0.01)
