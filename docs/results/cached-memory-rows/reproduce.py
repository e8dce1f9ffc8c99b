"""CachedDeCLUTRLoss's peak memory before and after NT-Xent was back-propagated a mini-batch of rows at a time.

The same benchmark, `python -m benchmarks.cached_memory --model TINY --anchors 256 1024 4096`, run on the code of the
commit before that change (checked out into a temporary git worktree, which is removed after) and on the code of
this checkout. TINY is an encoder small enough for the score matrix to dominate: `build_masked_lm(tokenizer,
hidden_size=32, num_layers=2, num_heads=2)` with all-MiniLM-L6-v2's tokenizer, seed 0, saved with it under --runs
(built first when missing). results.json beside this file keeps both runs' figures, so the table prints without
them.

    .venv/bin/python docs/results/cached-memory-rows/reproduce.py [--runs runs]

Prints the table as docs/benchmarks.md shows it and writes table.md beside this file (about 3 minutes a run on 2
cores; nothing else should share the cores while it runs).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # docs/results: the command line its scripts share
import results_script

ANCHORS = ["256", "1024", "4096"]
# The parent of 1700f0e, "CachedDeCLUTRLoss: NT-Xent back-propagated a mini-batch of rows at a time".
BEFORE = "471a0bd2084c50ab2b6369a53c162b04e9e12f18"
# run -> what its row says
ROWS = {"before": "whole score matrix (before)", "after": "a mini-batch of rows at a time"}


def tiny_wide_vocab(path: Path) -> None:
    import torch
    from transformers import AutoTokenizer

    from st_contrastive.default_model import default_model
    from st_contrastive.pretraining import build_masked_lm

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(default_model())
    build_masked_lm(tokenizer, hidden_size=32, num_layers=2, num_heads=2).save_pretrained(path)
    tokenizer.save_pretrained(path)


def benchmark(code: Path, model: Path) -> dict:
    """The benchmark's summary, run in a fresh process on the package and benchmarks of the folder ``code``."""
    with tempfile.TemporaryDirectory() as scratch:
        output = Path(scratch) / "cached_memory.json"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmarks.cached_memory",
                "--model",
                str(model.resolve()),
                "--anchors",
                *ANCHORS,
                "--output",
                str(output),
            ],
            cwd=code,
            check=True,
            env=results_script.environment(code),
        )
        return json.loads(output.read_text())


def measure(name: str, runs: Path) -> dict:
    model = runs / "tiny-wide-vocab"
    if not (model / "config.json").exists():
        tiny_wide_vocab(model)
    if name == "after":
        return benchmark(results_script.ROOT, model)
    with results_script.worktree(BEFORE) as code:
        return benchmark(code, model)


def table(results: dict) -> str:
    peaks = {name: [row["cached_mib"] for row in summary["rows"]] for name, summary in results.items()}
    lines = [
        "| cached peak | "
        + " | ".join(f"{int(anchors):,}" + " anchors" * (i == 0) for i, anchors in enumerate(ANCHORS))
        + f" | growth {int(ANCHORS[0]):,} → {int(ANCHORS[-1]):,} |",
        "|---" * (len(ANCHORS) + 2) + "|",
    ]
    for name, label in ROWS.items():
        lines.append(
            f"| {label} | "
            + " | ".join(f"{peak:,.0f} MiB" for peak in peaks[name])
            + f" | {peaks[name][-1] / peaks[name][0]:.1f}× |"
        )
    return "\n".join(lines)


RUNS = "runs"
TABLES = {
    "table": lambda runs=Path(RUNS): table(results_script.kept(__file__, list(ROWS), lambda name: measure(name, runs)))
}


def main(argv: list[str] | None = None) -> None:
    results_script.run(__file__, __doc__.splitlines()[0], TABLES, argv, runs=RUNS)


if __name__ == "__main__":
    main()
