"""Runs the tests that start real process groups and launchers many times in a row, and counts the failures.

A flaky distributed test is a defect to find at its cause; this is how its rate is measured, before and after a
fix. Each round is one pytest run of every test marked `distributed` (launchers, DDP equivalence, process groups,
the checks on the session's pair of ranks); `--load` keeps every core busy with a spinning process meanwhile, the
contention under which exit-time races show.

    .venv/bin/python tests/repeat_distributed.py --rounds 20 [--load] [--log-dir runs/repeat-distributed]

Prints one line per round and a closing count; a failed round's whole pytest output is kept in the log folder.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

TESTS = ["-m", "distributed", "tests"]
ROOT = Path(__file__).resolve().parent.parent


def _spin() -> None:
    while True:
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--load", action="store_true", help="one spinning process per core while the tests run")
    parser.add_argument("--log-dir", default="runs/repeat-distributed")
    parser.add_argument("tests", nargs="*", default=TESTS, help="pytest arguments (default: %(default)s)")
    args = parser.parse_args(argv)
    log_dir = Path(args.log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    spinners = (
        [multiprocessing.Process(target=_spin, daemon=True) for _ in range(os.cpu_count() or 1)] if args.load else []
    )
    for spinner in spinners:
        spinner.start()
    failed_rounds = 0
    try:
        for round_ in range(1, args.rounds + 1):
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args.tests],
                cwd=ROOT,
                env=os.environ | {"HF_HUB_OFFLINE": "1"},
                capture_output=True,
                text=True,
                check=False,
            )
            summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else f"exit {done.returncode}"
            if done.returncode != 0:
                failed_rounds += 1
                (log_dir / f"round-{round_:03d}.log").write_text(done.stdout + "\n--- stderr ---\n" + done.stderr)
            print(f"round {round_}/{args.rounds}: {summary} ({time.perf_counter() - start:.0f} s)", flush=True)
    finally:
        for spinner in spinners:
            spinner.terminate()
    print(f"{failed_rounds} of {args.rounds} rounds failed{' (cores loaded)' if args.load else ''}")
    return 1 if failed_rounds else 0


if __name__ == "__main__":
    sys.exit(main())
