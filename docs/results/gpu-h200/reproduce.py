"""The GPU tables of docs/benchmarks.md ("On a GPU"), from the kept JSON of each `benchmarks.gpu_step` run.

Each JSON beside this file is one run on one NVIDIA H200. Without it, the run is made again first with the command
that made it (RUNS below; a CUDA device, and .devcarry/ holding all-MiniLM-L6-v2's config and tokenizer files and a
parsed Wikipedia sample: benchmarks/gpu_step.py says how).

    .venv/bin/python docs/results/gpu-h200/reproduce.py {minilm,bert-base,multiview,cached-memory}

Prints the table as the page shows it and writes it to TABLE.md beside this file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))  # benchmarks/ is a package of the repository, not of the installed project
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # docs/results: the command line its scripts share
import results_script

COMMON = ["--device", "cuda", "--base", ".devcarry/minilm", "--random-weights"]
PARSED = ["--parsed", ".devcarry/wiki-parsed.jsonl.gz"]
PAIRS = ["scale-vs-setfit", "nli-supcon-vs-softmax", "declutr-vs-mnrl"]
# kept JSON -> the `python -m benchmarks.gpu_step` arguments that made it (without --output)
RUNS = {
    "1-all-pairs": [*COMMON, *PARSED, "--cached-anchors", "256", "1024", "4096", "--find-syncs"],
    "3-after-fixes-profiled": [
        *COMMON,
        "--encoders",
        "minilm",
        "--pairs",
        *PAIRS,
        "multiview-vs-gru",
        *PARSED,
        "--cached-anchors",
        "256",
        "1024",
        "4096",
        "--find-syncs",
        "--profile",
    ],
    "4-timing": [*COMMON, "--encoders", "minilm", "--pairs", *PAIRS],
}
LABELS = {
    "declutr-vs-mnrl": "DeCLUTR (MLM on) vs MNRL",
    "nli-supcon-vs-softmax": "NLI SupCon + CE vs SoftmaxLoss",
    "scale-vs-setfit": "SCALe vs SetFit's step",
}
BATCHES = {
    "declutr-vs-mnrl": "32 documents, spans ≤ 256 tokens",
    "nli-supcon-vs-softmax": "64 pairs",
    "scale-vs-setfit": "16 questions",
}


def run(name: str) -> dict:
    kept = HERE / f"{name}.json"
    if not kept.exists():
        from benchmarks import gpu_step

        gpu_step.main([*RUNS[name], "--output", str(kept)])
    return json.loads(kept.read_text())


def rows(result: dict, encoder: str) -> dict[tuple[str, str], dict]:
    return {(row["pair"], row["precision"]): row for row in result["rows"] if row["encoder"] == encoder}


def header(*columns: str) -> list[str]:
    return ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]


def versus(values: dict, unit: str = "") -> str:
    return f"{values['method']:,.0f}{unit} vs {values['baseline']:,.0f}{unit}"


def percent(share: float) -> str:
    return f"{100 * share:.1f} %"


def minilm() -> str:
    found = rows(run("4-timing"), "minilm")
    lines = header(
        "MiniLM-L6 step",
        "precision",
        "method / baseline",
        "examples/s, method vs baseline",
        "peak MiB, method vs baseline",
    )
    for pair, name in LABELS.items():
        for precision in ("fp32", "bf16"):
            row = found[pair, precision]
            speed = versus(row["examples_per_second"])
            speed += f" (MFU {percent(row['mfu_of_bf16_peak'])})" if "mfu_of_bf16_peak" in row else ""
            label = f"{name}, {BATCHES[pair]}" if precision == "fp32" else ""
            lines.append(
                f"| {label} | {precision} | {row['method_over_baseline']:.2f} | {speed} | {versus(row['peak_mib'])} |"
            )
    return "\n".join(lines)


def bert_base() -> str:
    found = rows(run("1-all-pairs"), "bert-base")
    lines = header(
        "BERT-base-sized step (fp32)",
        "method / baseline",
        "examples/s, method vs baseline",
        "peak MiB, method vs baseline",
    )
    for pair, label in LABELS.items():
        row = found[pair, "fp32"]
        speed = versus(row["examples_per_second"])
        if "mfu_of_bf16_peak" in row:  # fp32 alone is shown (the text says why); bf16's MFU beside it
            speed += (
                f" (MFU {percent(row['mfu_of_bf16_peak'])}; bf16: {percent(found[pair, 'bf16']['mfu_of_bf16_peak'])})"
            )
        lines.append(f"| {label} | {row['method_over_baseline']:.2f} | {speed} | {versus(row['peak_mib'])} |")
    return "\n".join(lines)


def multiview() -> str:
    found = rows(run("3-after-fixes-profiled"), "tree-lstm")
    lines = header(
        "multi-view, 256 parsed Wikipedia sentences, 300-d words, 600-d views",
        "method / baseline",
        "sentences/s",
        "peak MiB",
    )
    for precision, label in (("fp32", "DEP + SEQ vs SEQ + SEQ (bi-GRU only), fp32"), ("bf16", "the same, bf16")):
        row = found["multiview-vs-gru", precision]
        lines.append(
            f"| {label} | {row['method_over_baseline']:.2f} | {versus(row['examples_per_second'])} | "
            f"{versus(row['peak_mib'])} |"
        )
    return "\n".join(lines)


def cached_memory() -> str:
    cached = run("3-after-fixes-profiled")["cached_memory"]
    sizes = cached["rows"]
    lines = header(
        f"CachedDeCLUTRLoss (mini-batches of {cached['mini_batch_size']}) vs DeCLUTRLoss, spans ≤ "
        f"{cached['max_length']} tokens",
        *(f"{row['anchors']:,}" + (" anchors" if number == 0 else "") for number, row in enumerate(sizes)),
    )
    lines.append("| cached peak MiB | " + " | ".join(f"{row['cached_mib']:,.0f}" for row in sizes) + " |")
    lines.append("| uncached peak MiB | " + " | ".join(f"{row['uncached_mib']:,.0f}" for row in sizes) + " |")
    lines.append(
        "| cached / uncached step seconds | "
        + " | ".join(f"{row['cached_seconds']:.2f} / {row['uncached_seconds']:.2f}" for row in sizes)
        + " |"
    )
    return "\n".join(lines)


TABLES = {"minilm": minilm, "bert-base": bert_base, "multiview": multiview, "cached-memory": cached_memory}


def main(argv: list[str] | None = None) -> None:
    results_script.run(__file__, __doc__.splitlines()[0], TABLES, argv)


if __name__ == "__main__":
    main()
