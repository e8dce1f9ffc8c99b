"""The CPU benchmark tables of docs/benchmarks.md and docs/multiview.md, from the kept runs' JSON.

all.json beside this file is one `python -m benchmarks` run (what `make bench` runs) on 2 CPU cores, and
declutr-profile.json one `python benchmarks/declutr_step.py --repeats 10 --profile`. Without one, that run is made
first (about 12 minutes and 1 minute on 2 cores; nothing else should share the cores while it runs).

    .venv/bin/python docs/results/bench/reproduce.py {ratios,cached-memory,tree-lstm,declutr-profile}

Prints the table (ratios: every benchmark's ratio against its target, as `make bench` prints it; cached-memory:
CachedDeCLUTRLoss against DeCLUTRLoss per batch size; tree-lstm: the batched Tree-LSTM cells against the naive
per-node recursion; declutr-profile: the operators whose time grows most from MNRL's step to DeCLUTR's, as the
profile prints them) as the page shows it and writes it to TABLE.md beside this file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))  # benchmarks/ is a package of the repository, not of the installed project
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # docs/results: the command line its scripts share
import results_script


def run() -> dict:
    kept = HERE / "all.json"
    if not kept.exists():
        from benchmarks.__main__ import main as bench

        bench(["--output", str(kept)])
    return json.loads(kept.read_text())


def profiled() -> dict:
    kept = HERE / "declutr-profile.json"
    if not kept.exists():
        from benchmarks import declutr_step

        declutr_step.main(["--repeats", "10", "--profile", "--output", str(kept)])
    return json.loads(kept.read_text())


def header(*columns: str) -> list[str]:
    return ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]


def ratios() -> str:
    from benchmarks.__main__ import markdown, table

    return markdown(table(run()["results"]))


def cached_memory() -> str:
    lines = header(
        "anchors",
        "spans",
        "uncached peak",
        "cached peak",
        "uncached step",
        "cached step",
        "padding: one pass",
        "mini-batches",
        "sorted mini-batches",
    )
    for row in run()["results"]["cached_memory"]["rows"]:
        padding = row["padding"]
        lines.append(
            f"| {row['anchors']:,} | {row['spans']:,} | {row['uncached_mib']:,.0f} MiB | "
            f"{row['cached_mib']:,.0f} MiB | {row['uncached_seconds']:.2f} s | {row['cached_seconds']:.2f} s | "
            + " | ".join(f"{100 * padding[kind]:.1f} %" for kind in ("one_pass", "mini_batches", "mini_batches_sorted"))
            + " |"
        )
    return "\n".join(lines)


CELLS = {"child-sum, attention": "attentive child-sum", "binary": "binary"}


def tree_lstm() -> str:
    lines = header(
        "cell",
        "batched",
        "naive per node",
        "batched / naive",
        "the step's matrix products alone",
        "batched step / its products (target ≤ 1.25)",
    )
    for name, cell in run()["results"]["tree_lstm_throughput"]["cells"].items():
        products = cell["median_seconds"]["matrix_products"]
        lines.append(
            f"| {CELLS[name]} | {cell['batched_sentences_per_second']:,.0f} sentences/s | "
            f"{cell['naive_sentences_per_second']:,.0f} sentences/s | {cell['batched_over_naive']:.1f}× | "
            f"{cell['matrix_product_gflop']:.1f} GFLOP in {products * 1000:.1f} ms "
            f"({cell['matrix_product_gflop'] / products:.0f} GFLOP/s) | {cell['batched_over_matrix_products']:.2f} |"
        )
    return "\n".join(lines)


def declutr_profile() -> str:
    from benchmarks.declutr_step import profile_table

    return profile_table(profiled()["profile"])


TABLES = {"ratios": ratios, "cached-memory": cached_memory, "tree-lstm": tree_lstm, "declutr-profile": declutr_profile}


def main(argv: list[str] | None = None) -> None:
    results_script.run(__file__, __doc__.splitlines()[0], TABLES, argv)


if __name__ == "__main__":
    main()
