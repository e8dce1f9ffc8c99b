"""The SupCon + CE recipe end to end on a tiny model: results JSON with anchor counts, plain checkpoint, NLI head."""

import json

import pytest
from sentence_transformers import SentenceTransformer

from st_contrastive.commands.input_checks import SettingError
from st_contrastive.commands.supcon import main, run_name
from st_contrastive.models import load_nli_classifier


def test_recipe_end_to_end(tmp_path, tiny_mlm_dir):
    output = tmp_path / "supcon"
    main(
        [
            "--model",
            tiny_mlm_dir,
            "--dataset",
            "snli-dev",
            "--max-rows",
            "96",
            "--batch-size",
            "16",
            "--max-steps",
            "4",
            "--negatives",
            "3",
            "--classifier-hidden-size",
            "16",
            "--eval-tasks",
            "stsb-test",
            "mr",
            "--eval-max-rows",
            "200",
            "--output",
            str(output),
        ]
    )
    results = json.loads((output / "results.json").read_text())
    assert results["train"]["steps"] == 4 and results["train"]["anchors_seen"] > 0
    assert set(results["after"]) == {"stsb-test", "mr"} and set(results["before"]) == {"stsb-test", "mr"}
    assert set(results["after_averages"]) == {"sts", "transfer"}
    assert results["config"]["negatives"] == 3 and results["config"]["supcon_weight"] == 0.3
    assert results["config"]["similarity"] == "dot" and not results["config"]["paper"]  # the default, as trained
    assert SentenceTransformer(str(output), device="cpu").encode(["a sentence"]).shape == (1, 32)
    head = load_nli_classifier(output / "nli_head")
    assert head.labels == ["entailment", "neutral", "contradiction"] and head.hidden_size == 16


def test_paper_settings_are_one_named_choice():
    """--paper is NLISupConObjective.paper() (its cosine); an explicit --similarity beside it is refused by name."""
    from st_contrastive.commands.supcon import SupConNLIConfig, objective
    from st_contrastive.config.objectives import NLISupConObjective

    assert objective(SupConNLIConfig()) == NLISupConObjective()
    assert objective(SupConNLIConfig(paper=True)) == NLISupConObjective.paper() != NLISupConObjective()
    assert objective(SupConNLIConfig(paper=True, supcon_weight=0.1)) == NLISupConObjective.paper(supcon_weight=0.1)
    assert objective(SupConNLIConfig(similarity="cosine")).similarity == "cosine"


def test_paper_with_another_similarity_is_refused_naming_the_option(tmp_path):
    with pytest.raises(SettingError, match="--similarity dot: conflicts with --paper"):
        main(["--paper", "--similarity", "dot", "--output", str(tmp_path / "never-written")])
    assert not (tmp_path / "never-written").exists()


def test_run_names():
    class Args:
        supcon_weight, positives, negatives = 0.3, "all", "all"

    assert run_name(Args) == "supcon-nli-l0.3-allpalln"
    Args.supcon_weight = 0.0
    assert run_name(Args) == "ce-nli"


def test_recipe_trains_with_gradcache(tmp_path, tiny_mlm_dir):
    """--mini-batch-size swaps in CachedNLISupConLoss (its equality with the uncached loss: test_cached_supcon.py)."""
    options = [
        "--model",
        tiny_mlm_dir,
        "--dataset",
        "snli-dev",
        "--max-rows",
        "48",
        "--batch-size",
        "12",
        "--max-steps",
        "2",
        "--eval-tasks",
    ]
    cached = main([*options, "--mini-batch-size", "5", "--output", str(tmp_path / "cached")])
    assert cached["train"]["steps"] == 2 and cached["train"]["loss"]["mini_batch_size"] == 5
    assert load_nli_classifier(tmp_path / "cached" / "nli_head").labels[0] == "entailment"
