"""One writer per active-learning run: a process that writes a run folder (the loop, the labelling server) holds its
lock, and a second one is refused in one line naming the process that holds it.

The lock is ``flock`` on ``RUN/.lock``, which the kernel releases when its process ends however it ends: a lock left
by a killed process is no lock, and the next writer takes it over without a question. The file also says who holds
it (process id and command line), for the refusal. Within one process the lock is re-entrant: the labelling server
holds it, and the loop it runs in a background thread takes it again.
"""

from __future__ import annotations

import fcntl
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_NAME = ".lock"
_held: dict[Path, list] = {}  # run folder -> [open lock file, how many holders in this process]
_guard = threading.Lock()


class RunInUse(ValueError):
    """The run folder is held by another process."""


def acquire(run_dir: str | Path) -> None:
    """Hold the run's lock (or count one more holder, in the process that has it); :class:`RunInUse` otherwise."""
    folder = Path(run_dir).resolve()
    with _guard:
        if folder in _held:
            _held[folder][1] += 1
            return
        folder.mkdir(parents=True, exist_ok=True)
        handle = open(folder / LOCK_NAME, "a+", encoding="utf-8")  # noqa: SIM115 (held until release)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise RunInUse(
                f"{run_dir} is in use by {holder}: one process writes a run at a time; stop that one "
                "first, or wait for it to end"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"process {os.getpid()} ({' '.join(sys.argv) or 'python'})\n")
        handle.flush()
        _held[folder] = [handle, 1]


def release(run_dir: str | Path) -> None:
    folder = Path(run_dir).resolve()
    with _guard:
        entry = _held.get(folder)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] == 0:
            del _held[folder]
            entry[0].close()  # closing the file releases the flock


@contextmanager
def holding(run_dir: str | Path) -> Iterator[None]:
    acquire(run_dir)
    try:
        yield
    finally:
        release(run_dir)
