"""Which trainer checkpoints of a run are complete, and what ``--resume-from-checkpoint`` points at.

A process killed while it saves leaves a torn checkpoint (``optimizer.pt`` cut short), on which transformers' resume
fails with a 20-line ``PytorchStreamReader`` traceback. The trainer writes a manifest (every file and its size) once a
checkpoint is on disk, so a torn one is recognised from file sizes alone, before torch loads. A checkpoint without a
manifest (an older one, or one of a plain transformers ``Trainer``) is checked by the formats of its files instead.

Nothing here imports torch: the command line resolves ``--resume-from-checkpoint`` in its checks of the arguments.
"""

from __future__ import annotations

import json
import logging
import re
import struct
import zipfile
from pathlib import Path

from st_contrastive.atomic_files import write_atomically

logger = logging.getLogger(__name__)

MANIFEST_NAME = "checkpoint_manifest.json"
TRAINER_STATE_NAME = "trainer_state.json"
CHECKPOINTS_FOLDER = "checkpoints"  # a recipe's run folder keeps its trainer checkpoints here
_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")


class CheckpointError(ValueError):
    """A checkpoint or run folder that cannot be resumed; the message names it and what to do."""


def write_manifest(checkpoint: str | Path) -> Path:
    """Record every file of ``checkpoint`` with its size; written last, atomically, so its presence means that the
    save finished."""
    checkpoint = Path(checkpoint)
    files = {
        path.relative_to(checkpoint).as_posix(): path.stat().st_size
        for path in sorted(checkpoint.rglob("*"))
        if path.is_file() and path.name != MANIFEST_NAME and not path.name.endswith(".tmp")
    }
    write_atomically(checkpoint / MANIFEST_NAME, json.dumps({"files": files}, indent=1))
    return checkpoint / MANIFEST_NAME


def checkpoint_step(path: str | Path) -> int | None:
    match = _CHECKPOINT.match(Path(path).name)
    return int(match.group(1)) if match else None


def torn_file(checkpoint: str | Path) -> str | None:
    """Why ``checkpoint`` cannot be resumed (the file and what is wrong with it), or None when it is complete."""
    checkpoint = Path(checkpoint)
    manifest = checkpoint / MANIFEST_NAME
    if manifest.exists():
        try:
            files = json.loads(manifest.read_text())["files"]
        except (ValueError, KeyError, TypeError):
            return f"{MANIFEST_NAME} is damaged"
        for name, size in files.items():
            path = checkpoint / name
            if not path.is_file():
                return f"{name} is missing"
            if path.stat().st_size != size:
                return f"{name} is cut short ({path.stat().st_size:,} of {size:,} bytes)"
        return None
    if not (checkpoint / TRAINER_STATE_NAME).is_file():  # transformers writes it after the weights and optimizer
        return f"{TRAINER_STATE_NAME} is missing"
    for path in sorted(checkpoint.rglob("*")):
        problem = _format_problem(path) if path.is_file() else None
        if problem:
            return f"{path.relative_to(checkpoint).as_posix()} {problem}"
    return None


def _format_problem(path: Path) -> str | None:
    """What a file's own format says about its completeness: torch archives end with a zip directory, safetensors
    state their length, JSON parses."""
    try:
        if path.suffix in (".pt", ".pth", ".bin"):
            with zipfile.ZipFile(path) as archive:
                archive.infolist()
        elif path.suffix == ".safetensors":
            with open(path, "rb") as f:
                (header_size,) = struct.unpack("<Q", f.read(8))
                header = json.loads(f.read(header_size))
            data = max((entry["data_offsets"][1] for key, entry in header.items() if key != "__metadata__"), default=0)
            if path.stat().st_size < 8 + header_size + data:
                return "is cut short"
        elif path.suffix == ".json":
            json.loads(path.read_text(encoding="utf-8"))
    except (zipfile.BadZipFile, struct.error, ValueError, KeyError, UnicodeDecodeError):
        return "is cut short or damaged"
    return None


def checkpoints_of(folder: str | Path) -> list[Path]:
    """The ``checkpoint-N`` folders directly in ``folder``, by step, oldest first."""
    folder = Path(folder)
    found = [path for path in folder.glob("checkpoint-*") if path.is_dir() and checkpoint_step(path) is not None]
    return sorted(found, key=checkpoint_step)


def checkpoints_folder(path: str | Path) -> Path:
    """Where the checkpoints of ``path`` lie: a run folder's ``checkpoints/``, or ``path`` itself."""
    path = Path(path)
    return path / CHECKPOINTS_FOLDER if (path / CHECKPOINTS_FOLDER).is_dir() else path


def latest_complete_checkpoint(folder: str | Path, *, report_torn: bool = False) -> Path | None:
    """The newest complete checkpoint of a run folder (or of a folder of checkpoints); torn ones newer than it are
    skipped (with a warning when ``report_torn``)."""
    for checkpoint in reversed(checkpoints_of(checkpoints_folder(folder))):
        problem = torn_file(checkpoint)
        if problem is None:
            return checkpoint
        if report_torn:
            logger.warning("Skipping %s, a checkpoint torn while it was saved (%s)", checkpoint, problem)
    return None


def resolve_resume_point(value: str | Path, *, report_torn: bool = False) -> Path:
    """The checkpoint ``resume_from_checkpoint=VALUE`` means: a checkpoint folder as it is (refused when torn), or
    the latest complete checkpoint of a run folder. Raises :class:`CheckpointError` naming what is wrong."""
    path = Path(value)
    option = f"resume_from_checkpoint={str(value)!r}"
    if not path.is_dir():
        raise CheckpointError(
            f"{option}: no such folder (pass a run's output folder or one of its checkpoints/checkpoint-N)"
        )
    if checkpoint_step(path) is not None or (path / TRAINER_STATE_NAME).exists():
        problem = torn_file(path)
        if problem:
            run = path.parent.parent if path.parent.name == CHECKPOINTS_FOLDER else path.parent
            fallback = latest_complete_checkpoint(run)
            instead = (
                f"resume from the run folder {run} to take its last complete checkpoint ({fallback.name})"
                if fallback
                else "no complete checkpoint of this run is left: start the run over"
            )
            raise CheckpointError(f"{option}: torn checkpoint, {problem} (a save that was interrupted); {instead}")
        return path
    checkpoints = checkpoints_of(checkpoints_folder(path))
    if not checkpoints:
        raise CheckpointError(
            f"{option}: no checkpoint-N folder in it (a run saves them every save_steps, and when interrupted)"
        )
    latest = latest_complete_checkpoint(path, report_torn=report_torn)
    if latest is None:
        raise CheckpointError(
            f"{option}: every checkpoint in it is torn (e.g. {checkpoints[-1].name}: "
            f"{torn_file(checkpoints[-1])}); start the run over"
        )
    return latest


def run_folder_of(checkpoint: str | Path) -> Path | None:
    """The run folder a checkpoint belongs to (``RUN/checkpoints/checkpoint-N``), when it has that layout."""
    checkpoint = Path(checkpoint)
    return checkpoint.parent.parent if checkpoint.parent.name == CHECKPOINTS_FOLDER else None
