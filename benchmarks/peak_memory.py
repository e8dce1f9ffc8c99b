"""The peak memory of a block of code: ``torch.cuda.max_memory_allocated`` on a GPU, sampled resident memory on CPU.

Both are measured above what the process held when the block began (model, optimizer state and batch already in
place). On CPU the process's lifetime high-water mark (``ru_maxrss``) cannot serve: loading a corpus already sets
it, so a thread samples ``/proc/self/statm`` every millisecond instead, after handing the memory that earlier blocks
freed back to the system (glibc keeps freed memory in the process: a second block would reuse it unseen).
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import torch


class ResidentMemorySampler(threading.Thread):
    """Samples this process's resident memory (``/proc/self/statm``) every millisecond and keeps the highest."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.page = os.sysconf("SC_PAGE_SIZE")
        self.peak = 0
        self.running = True

    def current(self) -> int:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * self.page

    def run(self) -> None:
        while self.running:
            self.peak = max(self.peak, self.current())
            time.sleep(0.001)

    def stop(self) -> int:
        self.running = False
        self.join()
        return max(self.peak, self.current())


def release_freed_memory() -> None:
    """Return the heap's free memory to the system (glibc's ``malloc_trim``); elsewhere nothing to do."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


@contextmanager
def peak_memory(device: str) -> Iterator[dict]:
    """``with peak_memory(device) as peak: ...`` leaves the block's peak in ``peak["bytes"]`` (never below 0)."""
    peak = {}
    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
    else:
        release_freed_memory()
        sampler = ResidentMemorySampler()
        before = sampler.current()
        sampler.start()
    try:
        yield peak
    finally:
        if device == "cuda":
            torch.cuda.synchronize()
            highest = torch.cuda.max_memory_allocated()
        else:
            highest = sampler.stop()
        peak["bytes"] = max(highest - before, 0)
