"""SupCon + CE on NLI from all-MiniLM-L6-v2 without its Normalize: the similarity and temperature the paper leaves open.

Three `st-contrastive supcon-sweep` runs from the same Transformer + Pooling copy of the model (runs/minilm-meanpool,
built first when missing): cosine at τ 1 with CE only beside it, the dot product at τ 1, cosine at τ 0.1 (STS only);
λ 0.3 and all positives and negatives as candidates in each. A sweep reads back the variants it finished.
results.json beside this file keeps what the table needs, so the table prints without the runs.

    .venv/bin/python docs/results/supcon-settings/reproduce.py [--runs runs]

Prints the table as docs/supcon.md shows it and writes table.md beside this file (about 60 minutes on 2 cores).
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # docs/results: the command line its scripts share
import results_script

SWEEP = ["supcon-sweep", "--model", "runs/minilm-meanpool", "--candidates", "allpalln"]
SWEEPS = {  # folder under --runs -> its options (the base is scored once, in the first)
    "supcon-cos-t1": ["--supcon-weight", "0", "0.3"],
    "supcon-dot": ["--similarity", "dot", "--supcon-weight", "0.3", "--no-base-eval"],
    "supcon-t0.1": ["--temperature", "0.1", "--supcon-weight", "0.3", "--eval-tasks", "sts", "--no-base-eval"],
}
# row -> (sweep, variant)
ROWS = {
    "before NLI (as shipped, without Normalize)": ("supcon-cos-t1", "base"),
    "CE only (λ = 0)": ("supcon-cos-t1", "ce-only"),
    "SupCon + CE, cosine, τ = 1 (the paper's)": ("supcon-cos-t1", "allpalln-lambda0.3"),
    "SupCon + CE, cosine, τ = 0.1": ("supcon-t0.1", "allpalln-lambda0.3"),
    "SupCon + CE, dot product, τ = 1": ("supcon-dot", "allpalln-lambda0.3"),
}
CE = "CE only (λ = 0)"
COLUMNS = {"stsb-test": "STS-B", "sick-test": "SICK-R", "sts avg": "STS avg", "transfer avg": "transfer avg"}


def mean_pooled(path: Path) -> None:
    """all-MiniLM-L6-v2 without its Normalize module: the paper's Transformer + Pooling."""
    from sentence_transformers import SentenceTransformer

    from st_contrastive.default_model import default_model

    SentenceTransformer(modules=list(SentenceTransformer(default_model()))[:-1]).save(str(path))


@functools.cache
def sweep_scores(name: str, runs: Path) -> dict:
    output = runs / name
    if not (output / "sweep.json").exists():
        from st_contrastive.cli import main as cli_main

        if not (runs / "minilm-meanpool" / "modules.json").exists():
            mean_pooled(runs / "minilm-meanpool")
        cli_main([*SWEEP, *SWEEPS[name], "--output", str(output)])
    return json.loads((output / "sweep.json").read_text())["scores"]


def row(name: str, runs: Path) -> dict:
    sweep, variant = ROWS[name]
    return {column: sweep_scores(sweep, runs)[variant].get(column) for column in COLUMNS}


def signed(value: float) -> str:
    return f"{value:+.2f}".replace("-", "−")


def table(rows: dict) -> str:
    lines = ["| setting | STS-B | SICK-R | STS avg | vs CE | transfer avg | vs CE |", "|---" * 7 + "|"]
    ce = rows[CE]
    for name, row in rows.items():
        cells = []
        for column in COLUMNS:
            value = row[column]
            cells.append("" if value is None else f"{value:.2f}")
            if column.endswith("avg"):  # its change against CE only, which has none
                cells.append("" if value is None or name == CE else signed(value - ce[column]))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


RUNS = "runs"
TABLES = {"table": lambda runs=Path(RUNS): table(results_script.kept(__file__, list(ROWS), lambda name: row(name, runs)))}


def main(argv: list[str] | None = None) -> None:
    results_script.run(__file__, __doc__.splitlines()[0], TABLES, argv, runs=RUNS)


if __name__ == "__main__":
    main()
