"""Publishing a run: the model card says what the run was and measured, the upload folder holds a loadable model
without trainer checkpoints, and sentence-transformers' real push_to_hub uploads that folder (the Hub's two HTTP
calls are replaced by a local record; nothing touches the network)."""

from __future__ import annotations

import json

import pytest
import torch
from sentence_transformers import SentenceTransformer

from st_contrastive.commands.push import main as push_main
from st_contrastive.commands.push import publish
from st_contrastive.commands.supcon import main as supcon_main
from st_contrastive.publishing import check_repo_id, model_card, prepare_upload, push

REPO = "someone/tiny-supcon"


@pytest.fixture(scope="module")
def supcon_run(tmp_path_factory, tiny_mlm_dir):
    output = tmp_path_factory.mktemp("run") / "supcon"
    supcon_main(
        [
            "--model",
            tiny_mlm_dir,
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
            "--eval-max-rows",
            "40",
            "--output",
            str(output),
        ]
    )
    return output


def test_card_states_method_loss_data_scores_and_citation(supcon_run):
    results = json.loads((supcon_run / "results.json").read_text())
    card = model_card(supcon_run, REPO)
    assert card.startswith("---\n") and "\nlibrary_name: sentence-transformers\n" in card.split("\n---\n")[0]
    assert "- loss:NLISupConLoss" in card and "supervised contrastive learning + cross-entropy on NLI" in card
    assert '"supcon_weight": 0.3' in card and '"temperature": 1.0' in card
    assert "48 NLI pairs of `snli-dev`" in card
    before, after = (results[k]["stsb-test"]["spearman"] for k in ("before", "after"))
    assert f"| stsb-test | {before:.2f} | {after:.2f} | {after - before:+.2f} |" in card
    assert "@misc{liao2021supcon" in card and "reimers-2019-sentence-bert" in card
    assert f'SentenceTransformer("{REPO}")' in card and "trust_remote_code" not in card


def test_upload_folder_is_the_model_without_checkpoints(supcon_run):
    assert (supcon_run / "checkpoints").is_dir()
    folder = prepare_upload(supcon_run, REPO)
    names = {path.name for path in folder.iterdir()}
    assert {"modules.json", "model.safetensors", "results.json", "nli_head", "README.md"} <= names
    assert "checkpoints" not in names and "hub-upload" not in names
    assert (folder / "README.md").read_text() == model_card(supcon_run, REPO)
    texts = ["A dog runs in the park.", "Nobody is outside."]
    torch.testing.assert_close(
        SentenceTransformer(str(folder), device="cpu").encode(texts, convert_to_tensor=True),
        SentenceTransformer(str(supcon_run), device="cpu").encode(texts, convert_to_tensor=True),
    )


def test_push_uploads_that_folder_through_sentence_transformers(supcon_run, fake_hub):
    url = push_main([str(supcon_run), "--repo-id", REPO, "--private"])
    assert url == f"https://huggingface.co/{REPO}/commit/0"
    assert fake_hub["created"] == (REPO, True, True)
    assert "checkpoints" not in fake_hub["uploaded"] and "nli_head" in fake_hub["uploaded"]
    assert fake_hub["card"] == model_card(supcon_run, REPO)


def test_a_failed_upload_says_the_run_is_safe_and_how_to_retry(supcon_run, monkeypatch):
    def refuse(self, repo_id, **kwargs):
        raise RuntimeError("401 Unauthorized")

    monkeypatch.setattr("huggingface_hub.HfApi.create_repo", refuse)
    with pytest.raises(OSError, match=f"the run is saved in {supcon_run}.*401 Unauthorized.*st-contrastive push"):
        publish(supcon_run, REPO)
    assert (supcon_run / "results.json").exists()


def test_bad_repo_ids_and_folders_fail_with_one_clear_line(tmp_path):
    with pytest.raises(ValueError, match="repo_id='my model': is not a Hub repository id"):
        check_repo_id("my model")
    with pytest.raises(FileNotFoundError, match="has no modules.json"):
        push(tmp_path, REPO)


def test_multiview_push_to_hub_card_asks_for_the_plugin_and_remote_code(tmp_path, parsed_books, fake_hub):
    """A real multi-view run with --push-to-hub: its checkpoint holds plugin modules, so the card says how to load it."""
    from st_contrastive.commands.multiview import main as multiview_main

    output = tmp_path / "multiview"
    results = multiview_main(
        [
            "--parsed",
            parsed_books,
            "--word-dim",
            "16",
            "--dim",
            "12",
            "--max-steps",
            "2",
            "--batch-size",
            "16",
            "--eval-tasks",
            "trec",
            "--eval-max-rows",
            "100",
            "--eval-folds",
            "2",
            "--parse-cache",
            str(tmp_path / "parsed"),
            "--output",
            str(output),
            "--push-to-hub",
            "someone/multiview",
        ]
    )
    card = fake_hub["card"]
    assert 'SentenceTransformer("someone/multiview", trust_remote_code=True)' in card
    assert "pip install st-contrastive sentence-transformers" in card
    assert f"{results['config']['sentences']:,} parsed sentences" in card
    assert f"| trec |  | {results['after']['trec']['accuracy']:.2f} |  |" in card
    assert "simoulin-crabbe-2021-contrasting" in card
    assert {"1_MultiView", "modules.json"} <= set(fake_hub["uploaded"]) and "checkpoints" not in fake_hub["uploaded"]
