"""What makes an MLM pretraining run resumable: the tokenizer and settings saved when it starts, checked and reused
by ``resume=True``, and the last complete trainer checkpoint to continue from."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from transformers import BertTokenizerFast

from st_contrastive.checkpoints import latest_complete_checkpoint
from st_contrastive.run_settings import changed_settings

logger = logging.getLogger(__name__)

SETTINGS_FILE = "pretraining_settings.json"


def save_run_start(output_dir: Path, tokenizer: BertTokenizerFast, settings: dict, documents: int) -> None:
    """Written before training, so an interrupted run can be resumed with the very same tokenizer."""
    output_dir.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(output_dir)
    (output_dir / SETTINGS_FILE).write_text(
        json.dumps({**settings, "vocab_size": len(tokenizer), "documents": documents}, indent=2) + "\n"
    )


def resumed_tokenizer(output_dir: Path, settings: dict, documents: int) -> BertTokenizerFast:
    """The tokenizer of the run being resumed, after checking it was started with these settings."""
    settings_file = output_dir / SETTINGS_FILE
    if not settings_file.exists():
        raise ValueError(
            f"Nothing to resume in {settings_file.parent}: no {settings_file.name}. Start it without resume."
        )
    saved = json.loads(settings_file.read_text())
    # The vocabulary size is the trained tokenizer's, max_minutes only a guard: neither changes what is trained.
    differences = changed_settings(saved, {**settings, "documents": documents}, {"vocab_size", "max_minutes"})
    changed = [f"{name}: {old} -> {new}" for name, (old, new) in differences.items()]
    if changed:
        raise ValueError(
            f"Cannot resume {settings_file.parent}: it was started with other settings ({'; '.join(changed)}). "
            "Pass the original settings, or a new output folder."
        )
    return BertTokenizerFast.from_pretrained(settings_file.parent)


def checkpoint_to_resume(checkpoints: Path) -> Path | None:
    """The last complete checkpoint: one torn by a kill while it was saved is skipped (with a warning)."""
    found = latest_complete_checkpoint(checkpoints, report_torn=True) if checkpoints.is_dir() else None
    if not found:
        logger.info("No complete checkpoint in %s yet: starting from step 0 with the saved tokenizer", checkpoints)
    return found
