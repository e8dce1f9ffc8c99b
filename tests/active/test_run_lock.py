"""One writer per run (st_contrastive/active/run_lock.py): a second process is refused by name, a killed holder's lock
is taken over, and one process may take its own lock again."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from st_contrastive.active import run_lock

# The lock module alone, loaded by its path: the package's __init__ would import torch, seconds per process.
HOLD = (
    "import importlib.util, sys; "
    f"spec = importlib.util.spec_from_file_location('run_lock', {run_lock.__file__!r}); "
    "run_lock = importlib.util.module_from_spec(spec); spec.loader.exec_module(run_lock); "
    "run_lock.acquire(sys.argv[1]); print('held', flush=True); sys.stdin.read()"
)


def hold_in_another_process(folder) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(folder)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout.readline().strip() == "held"
    return process


def test_a_second_process_is_refused_naming_the_holder_and_a_killed_holder_leaves_no_lock(tmp_path):
    holder = hold_in_another_process(tmp_path)
    with pytest.raises(run_lock.RunInUse, match=rf"is in use by process {holder.pid} \("):
        run_lock.acquire(tmp_path)
    holder.send_signal(signal.SIGKILL)  # no handler runs: the kernel drops its lock
    holder.wait()
    with run_lock.holding(tmp_path):
        second = subprocess.run(
            [sys.executable, "-c", HOLD, str(tmp_path)], capture_output=True, text=True, check=False
        )
        assert second.returncode == 1 and "RunInUse" in second.stderr and "in use by process" in second.stderr


def test_the_same_process_may_hold_its_run_twice(tmp_path):
    with run_lock.holding(tmp_path), run_lock.holding(tmp_path):  # the server, and the loop it runs
        pass
    with run_lock.holding(tmp_path):  # released as often as taken
        pass
