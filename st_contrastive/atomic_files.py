"""Files and folders that a kill at any moment leaves whole: the old version or the new one, never half of either.

A file is written beside its destination under a name no other writer uses (process and thread), synced, and moved
over it with ``os.replace``, which POSIX makes atomic. A folder (a saved model) is saved beside its destination and
swapped in by two renames; a kill between them leaves the old folder under a known name, which
:func:`recover_folder` (called before every save and read) puts back.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path


def _beside(path: Path, role: str) -> Path:
    return path.with_name(f".{path.name}.{role}-{os.getpid()}-{threading.get_ident()}")


def write_atomically(path: str | Path, content: str | bytes) -> None:
    """Write ``content`` (text as UTF-8) to ``path`` so that readers see the old file or the new one."""
    path = Path(path)
    temporary = _beside(path, "tmp")
    with temporary.open("wb") as f:
        f.write(content.encode() if isinstance(content, str) else content)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temporary, path)


def _previous(folder: Path) -> Path:
    return folder.with_name(f".{folder.name}.previous")


def recover_folder(folder: str | Path) -> None:
    """Put back the folder a kill in the middle of :func:`save_folder_atomically`'s swap left aside."""
    folder = Path(folder)
    previous = _previous(folder)
    if previous.is_dir():
        if folder.is_dir():
            shutil.rmtree(previous)  # the swap finished; only the clean-up was cut short
        else:
            os.replace(previous, folder)


def save_folder_atomically(folder: str | Path, save: Callable[[Path], None]) -> None:
    """``save(path)`` into a new folder beside ``folder``, then swap it in: a kill during the save leaves ``folder``
    as it was, and one during the swap leaves it for :func:`recover_folder`."""
    folder = Path(folder)
    recover_folder(folder)
    for stale in folder.parent.glob(f".{folder.name}.partial-*"):  # a save a kill cut short (one writer per run)
        shutil.rmtree(stale, ignore_errors=True)
    staging = _beside(folder, "partial")
    save(staging)
    previous = _previous(folder)
    if folder.is_dir():
        os.replace(folder, previous)
    os.replace(staging, folder)
    shutil.rmtree(previous, ignore_errors=True)
