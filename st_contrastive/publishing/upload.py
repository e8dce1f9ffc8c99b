"""The folder a run is published from, and the upload through sentence-transformers' ``push_to_hub``."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from st_contrastive.arguments import require
from st_contrastive.publishing.model_card import needs_remote_code, write_model_card

UPLOAD_FOLDER = "hub-upload"
# Not published: trainer checkpoints (optimizer states), the MLM head's warm-up run, the *ForMaskedLM copy kept to
# continue MLM training, logs, and an earlier upload folder.
LEFT_OUT = ("checkpoints", "head-warmup", "masked-lm", UPLOAD_FOLDER, "*.log")
_REPO_ID = re.compile(r"^[\w.-]+/[\w.-]+$")


def check_repo_id(repo_id: str) -> None:
    """A Hub repository id must be ``USER/NAME`` (checked before any training or upload starts)."""
    require(
        "repo_id",
        repo_id,
        bool(_REPO_ID.match(repo_id or "")),
        "is not a Hub repository id: write it as USER/NAME or ORG/NAME",
    )


def prepare_upload(run_dir: str | Path, repo_id: str) -> Path:
    """Copy what is published of ``run_dir`` into ``run_dir/hub-upload``. Its README.md is the run's own card
    (written with the run), rewritten first by the same code so that it names ``repo_id`` and the current
    ``results.json``: the folder and the Hub then hold the same card."""
    run_dir = Path(run_dir)
    for needed, why in (("modules.json", "a saved SentenceTransformer"), ("results.json", "a finished run")):
        if not (run_dir / needed).exists():
            raise FileNotFoundError(f"{run_dir} has no {needed}: publish {why} (the output folder of a training run)")
    write_model_card(run_dir, repo_id)  # before copying: a run without a card fails with nothing copied
    folder = run_dir / UPLOAD_FOLDER
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(run_dir, folder, ignore=shutil.ignore_patterns(*LEFT_OUT))
    return folder


def push(run_dir: str | Path, repo_id: str, private: bool = False, token: str | None = None) -> str:
    """Publish ``run_dir`` as ``repo_id``; returns the commit URL. The folder is loaded first, so only a model that
    loads (with the plugin's modules where it has them) is uploaded."""
    from sentence_transformers import SentenceTransformer

    check_repo_id(repo_id)
    folder = prepare_upload(run_dir, repo_id)
    model = SentenceTransformer(str(folder), device="cpu", trust_remote_code=needs_remote_code(folder))
    return model.push_to_hub(
        repo_id,
        token=token,
        private=private,
        local_model_path=str(folder),
        exist_ok=True,
        commit_message=f"st-contrastive: upload {Path(run_dir).name}",
    )
