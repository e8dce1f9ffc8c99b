"""benchmarks/peak_memory.py on CPU: a block that allocates what an earlier block freed is measured in full, not
read as the process's kept free memory (a SupConLoss step measured after a padded one read 0 MiB that way)."""

import torch

from benchmarks.peak_memory import peak_memory

CHUNKS = 200  # of 1 MiB each


def test_a_block_after_one_that_freed_as_much_reads_its_own_peak():
    kept = []

    def block():
        chunks = []
        for _ in range(CHUNKS):
            chunks.append(torch.ones(256, 1024))  # 1 MiB
            kept.append(torch.ones(8))  # small and kept: the freed chunks are not at the heap's top
        del chunks

    peaks = []
    for _ in range(3):
        with peak_memory("cpu") as peak:
            block()
        peaks.append(peak["bytes"] / 2**20)
    # Without handing freed memory back first, the third block read 29 MiB here.
    assert all(value > 0.75 * CHUNKS for value in peaks), peaks
