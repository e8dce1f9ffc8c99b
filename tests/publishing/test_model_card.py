"""Every run folder holds the method's model card, not sentence-transformers' generic one: its metadata, parsed by
huggingface_hub as the Hub parses it, names the base model, data, license and the run's after-training scores, and
``push`` uploads that same card. Real recipe runs on a tiny BERT; the Hub's two HTTP calls are a local record."""

from __future__ import annotations

import json
import shutil

import pytest
from huggingface_hub import ModelCard, ModelCardData
from sentence_transformers import SentenceTransformer

from st_contrastive.commands.push import main as push_main
from st_contrastive.commands.simcse import main as simcse_main
from st_contrastive.commands.supcon import main as supcon_main
from st_contrastive.config.evaluation import main_score
from st_contrastive.publishing import card_metadata, fill_model_card_data
from st_contrastive.publishing.card_metadata import DEFAULT_MODEL_LABEL, base_model_id

REPO = "someone/tiny-supcon"
PLACEHOLDER = "sentence_transformers_model_id"


@pytest.fixture(scope="module")
def hub_cached_base(tmp_path_factory, tiny_mlm_dir) -> str:
    """The tiny BERT laid out as huggingface_hub caches a download of ``someone/tiny-bert``, with the base's own
    card (its license)."""
    snapshot = tmp_path_factory.mktemp("hub") / "models--someone--tiny-bert" / "snapshots" / "0123abcd"
    shutil.copytree(tiny_mlm_dir, snapshot)
    (snapshot / "README.md").write_text("---\nlicense: mit\n---\n\n# tiny-bert\n")
    return str(snapshot)


@pytest.fixture(scope="module")
def supcon_run(tmp_path_factory, hub_cached_base):
    output = tmp_path_factory.mktemp("run") / "supcon"
    supcon_main(
        [
            "--model",
            hub_cached_base,
            "--dataset",
            "snli-dev",
            "--max-rows",
            "48",
            "--max-steps",
            "2",
            "--batch-size",
            "12",
            "--save-steps",
            "2",
            "--eval-tasks",
            "stsb-test",
            "sick-test",
            "--eval-max-rows",
            "40",
            "--output",
            str(output),
        ]
    )
    return output


def after_scores(run_dir) -> dict[str, float]:
    results = json.loads((run_dir / "results.json").read_text())
    return {task: main_score(metrics) for task, metrics in results["after"].items()}


def test_run_folder_card_metadata_is_the_runs(supcon_run):
    card = ModelCard.load(supcon_run / "README.md")
    data = card.data
    assert data.base_model == "someone/tiny-bert"  # from the Hub cache path the run was given
    assert data.datasets == ["stanfordnlp/snli"]
    assert data.license == "mit"  # the base model's license carries over
    assert data.language == ["en"]  # the shared data are English
    assert data.library_name == "sentence-transformers" and data.pipeline_tag == "sentence-similarity"
    assert {"sentence-transformers", "st-contrastive", "supcon-nli", "loss:NLISupConLoss"} <= set(data.tags)
    assert {result.dataset_name: result.metric_value for result in data.eval_results} == after_scores(supcon_run)
    assert {result.metric_type for result in data.eval_results} == {"spearman"}
    assert {result.task_type for result in data.eval_results} == {"sentence-similarity"}
    assert data.model_name == "supcon"


def test_run_folder_card_is_the_methods_and_loads_as_is(supcon_run):
    text = (supcon_run / "README.md").read_text()
    assert PLACEHOLDER not in text and "Unnamed Dataset" not in text
    assert "supervised contrastive learning + cross-entropy on NLI" in text and "@misc{liao2021supcon" in text
    assert "48 NLI pairs of `snli-dev`" in text and "| stsb-test |" in text
    assert f'SentenceTransformer("{supcon_run}")' in text  # not published yet: the folder, which loads as it is
    # sentence-transformers reads the card with the model and keeps it when it saves or pushes the model again.
    model = SentenceTransformer(str(supcon_run), device="cpu")
    assert model._model_card_text == text


def test_push_uploads_the_run_folders_card_naming_the_repository(supcon_run, fake_hub):
    push_main([str(supcon_run), "--repo-id", REPO])
    uploaded = fake_hub["card"]
    assert uploaded == (supcon_run / "README.md").read_text()  # one card: the folder's, rewritten for the repo
    assert f'SentenceTransformer("{REPO}")' in uploaded and PLACEHOLDER not in uploaded
    data = ModelCard(uploaded).data
    assert data.base_model == "someone/tiny-bert" and data.license == "mit" and data.datasets == ["stanfordnlp/snli"]
    assert {result.dataset_name: result.metric_value for result in data.eval_results} == after_scores(supcon_run)
    assert data.model_name == "tiny-supcon"


def test_simcse_run_names_its_corpus_and_pushes_to_hub_with_its_card(tmp_path, tiny_mlm_dir, fake_hub):
    """Another recipe, through the same write: a base of unknown origin (a local folder) is not claimed as a Hub
    model, and with --push-to-hub the folder's card names the repository it went to."""
    output = tmp_path / "simcse"
    simcse_main(
        [
            "--model",
            tiny_mlm_dir,
            "--dataset",
            "wiki",
            "--max-rows",
            "20",
            "--max-steps",
            "2",
            "--batch-size",
            "8",
            "--eval-tasks",
            "stsb-dev",
            "--eval-max-rows",
            "40",
            "--output",
            str(output),
            "--push-to-hub",
            "someone/tiny-simcse",
        ]
    )
    text = (output / "README.md").read_text()
    assert fake_hub["card"] == text and 'SentenceTransformer("someone/tiny-simcse")' in text
    data = ModelCard.load(output / "README.md").data
    assert data.base_model is None and data.license is None
    assert data.datasets == ["wikimedia/wikipedia"] and "loss:MultipleNegativesRankingLoss" in data.tags
    assert [(r.dataset_name, r.dataset_split, r.metric_value) for r in data.eval_results] == [
        ("stsb-dev", "validation", after_scores(output)["stsb-dev"])
    ]


def test_base_model_hub_ids():
    assert base_model_id(DEFAULT_MODEL_LABEL) == "sentence-transformers/all-MiniLM-L6-v2"
    assert base_model_id("someone/bert-small") == "someone/bert-small"
    assert base_model_id("/no/such/run/folder") is None


def test_sentence_transformers_own_card_carries_the_metadata(tiny_model, tmp_path):
    """A model saved by sentence-transformers itself (the Python API's ``model.save``) after fill_model_card_data."""
    results = {
        "method": "declutr",
        "model": "someone/bert-small",
        "config": {"dataset": "wiki"},
        "after": {"stsb-test": {"spearman": 51.5}},
    }
    metadata = card_metadata(results, "my-declutr", ["st-contrastive", "declutr"])
    metadata.license = "apache-2.0"
    fill_model_card_data(tiny_model, metadata)
    tiny_model.save(str(tmp_path / "saved"))
    data = ModelCard.load(tmp_path / "saved" / "README.md").data
    assert isinstance(data, ModelCardData)
    assert data.base_model == "someone/bert-small" and data.license == "apache-2.0" and data.language == ["en"]
    assert data.datasets == ["wikimedia/wikipedia"] and {"st-contrastive", "declutr"} <= set(data.tags)
