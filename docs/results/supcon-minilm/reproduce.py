"""SupCon + CE on NLI from all-MiniLM-L6-v2: which start the SBERT head needs, and the settings the paper leaves open.

Five `st-contrastive supcon-sweep` runs, λ and all positives and negatives as candidates in each:
- `starts`: the model as shipped (it ends in Normalize: CE only and λ 0.3, STS only) against its Transformer + Pooling
  copy (runs/minilm-meanpool, built first when missing: CE only, λ 0.1, λ 0.3);
- `settings`: on the copy, cosine at τ 1 with CE only beside it, the dot product at τ 1, cosine at τ 0.1 (λ 0.3).
A sweep reads back the variants it finished. results.json beside this file keeps what the tables need, so they
print without the runs.

    .venv/bin/python docs/results/supcon-minilm/reproduce.py {starts,settings} [--runs runs]

Prints the table as docs/supcon.md shows it and writes TABLE.md beside this file (about 10 minutes a variant on 2
cores).
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # docs/results: the command line its scripts share
import results_script

MEAN_POOLED = "runs/minilm-meanpool"
# folder under --runs -> the supcon-sweep options that make it (a model's base is scored once, in its first sweep)
SWEEPS = {
    "supcon-normalize": ["--supcon-weight", "0", "0.3", "--eval-tasks", "sts"],  # the default model, as shipped
    "supcon-cos-t1": ["--model", MEAN_POOLED, "--supcon-weight", "0", "0.3"],
    "supcon-meanpool-lambda0.1": [
        "--model",
        MEAN_POOLED,
        "--supcon-weight",
        "0.1",
        "--eval-tasks",
        "sts",
        "--no-base-eval",
    ],
    "supcon-dot": ["--model", MEAN_POOLED, "--similarity", "dot", "--supcon-weight", "0.3", "--no-base-eval"],
    "supcon-t0.1": [
        "--model",
        MEAN_POOLED,
        "--temperature",
        "0.1",
        "--supcon-weight",
        "0.3",
        "--eval-tasks",
        "sts",
        "--no-base-eval",
    ],
}
STS = {"stsb-test": "STS-B", "sick-test": "SICK-R", "sts avg": "STS avg"}
# each table's rows: row -> (sweep, variant)
STARTS = {
    "as shipped (before NLI) | —": ("supcon-normalize", "base"),
    "with Normalize | ce-only": ("supcon-normalize", "ce-only"),
    "with Normalize | allpalln-lambda0.3": ("supcon-normalize", "allpalln-lambda0.3"),
    "Transformer + Pooling | ce-only": ("supcon-cos-t1", "ce-only"),
    "Transformer + Pooling | allpalln-lambda0.1": ("supcon-meanpool-lambda0.1", "allpalln-lambda0.1"),
    "Transformer + Pooling | allpalln-lambda0.3": ("supcon-cos-t1", "allpalln-lambda0.3"),
}
SETTINGS = {
    "before NLI (as shipped, without Normalize)": ("supcon-cos-t1", "base"),
    "CE only (λ = 0)": ("supcon-cos-t1", "ce-only"),
    "SupCon + CE, cosine, τ = 1 (the paper's)": ("supcon-cos-t1", "allpalln-lambda0.3"),
    "SupCon + CE, cosine, τ = 0.1": ("supcon-t0.1", "allpalln-lambda0.3"),
    "SupCon + CE, dot product, τ = 1": ("supcon-dot", "allpalln-lambda0.3"),
}
SETTINGS_COLUMNS = {**STS, "transfer avg": "transfer avg"}


def mean_pooled(path: Path) -> None:
    """all-MiniLM-L6-v2 without its Normalize module: the paper's Transformer + Pooling."""
    from sentence_transformers import SentenceTransformer

    from st_contrastive.default_model import default_model

    SentenceTransformer(modules=list(SentenceTransformer(default_model()))[:-1]).save(str(path))


@functools.cache
def sweep_scores(name: str, runs: Path) -> dict:
    output = runs / name
    if not (output / "sweep.json").exists():
        from st_contrastive.commands.cli import main as cli_main

        if MEAN_POOLED in SWEEPS[name] and not (Path(MEAN_POOLED) / "modules.json").exists():
            mean_pooled(Path(MEAN_POOLED))
        cli_main(["supcon-sweep", "--candidates", "allpalln", *SWEEPS[name], "--output", str(output)])
    return json.loads((output / "sweep.json").read_text())["scores"]


def row(rows: dict, name: str, columns: dict, runs: Path) -> dict:
    sweep, variant = rows[name]
    return {column: sweep_scores(sweep, runs)[variant].get(column) for column in columns}


def signed(value: float) -> str:
    return f"{value:+.2f}".replace("-", "−")


def starts(rows: dict) -> str:
    """STS only; each row against the CE-only row of its start, the last one above it (the base row has none)."""
    lines = ["| start | variant | STS-B | SICK-R | STS avg | vs CE |", "|---" * 6 + "|"]
    ce = None
    for name, scores in rows.items():
        ce = scores if name.endswith("ce-only") else ce
        change = "" if ce is None else f"{scores['sts avg'] - ce['sts avg']:+.2f}"
        lines.append(f"| {name} | " + " | ".join(f"{scores[column]:.2f}" for column in STS) + f" | {change} |")
    return "\n".join(lines)


def settings(rows: dict) -> str:
    """With transfer; every row's averages against CE only."""
    lines = ["| setting | STS-B | SICK-R | STS avg | vs CE | transfer avg | vs CE |", "|---" * 7 + "|"]
    ce = rows["CE only (λ = 0)"]
    for name, scores in rows.items():
        cells = []
        for column in SETTINGS_COLUMNS:
            value = scores[column]
            cells.append("" if value is None else f"{value:.2f}")
            if column.endswith("avg"):  # its change against CE only, which has none
                cells.append("" if value is None or scores is ce else signed(value - ce[column]))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def kept_rows(rows: dict, columns: dict, runs: Path) -> dict:
    return results_script.kept(__file__, list(rows), lambda name: row(rows, name, columns, runs))


RUNS = "runs"
TABLES = {
    "starts": lambda runs=Path(RUNS): starts(kept_rows(STARTS, STS, runs)),
    "settings": lambda runs=Path(RUNS): settings(kept_rows(SETTINGS, SETTINGS_COLUMNS, runs)),
}


def main(argv: list[str] | None = None) -> None:
    results_script.run(__file__, __doc__.splitlines()[0], TABLES, argv, runs=RUNS)


if __name__ == "__main__":
    main()
