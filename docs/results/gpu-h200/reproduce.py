"""The GPU tables of docs/benchmarks.md ("On a GPU"), from the kept JSON of each `benchmarks.gpu_step` run.

Each JSON beside this file is one run on one NVIDIA H200. Without it, the run is made again first with the command
that made it (RUNS below; a CUDA device, and .devcarry/ holding all-MiniLM-L6-v2's config and tokenizer files and a
parsed Wikipedia sample: benchmarks/gpu_step.py says how). The runs 5-* and 6-* (2026-11-28, PyTorch 2.11.0+cu130,
sentence-transformers 6.2.0) read the first 1,800 Wikipedia articles (ST_CONTRASTIVE_DATA pointing at a copy holding
them, the NLI dev set and TREC); some of 6-* were cut short by their time limit and hold the rows they reached.

    .venv/bin/python docs/results/gpu-h200/reproduce.py {minilm,bert-base,multiview,cached-memory,now,groups}

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
ONE_PASS = ["--length-groups", "1", "--pairs", "declutr-vs-mnrl", "nli-supcon-vs-softmax"]
TWO_GROUPS = ["--length-groups", "2", "--call-tokens", "0", "--pairs", "declutr-vs-mnrl", "nli-supcon-vs-softmax"]
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
    # Length groups cut for the fewest tokens (--call-tokens 0: the code of the day, before CALL_TOKENS)
    "5-grouped": [*COMMON, "--call-tokens", "0", "--pairs", "declutr-contrastive-vs-mnrl", *PAIRS],
    "5-one-pass": [*COMMON, *ONE_PASS, "--encoders", "bert-base", "minilm", "--precisions", "bf16"],
    "6-one-pass-fp32": [*COMMON, *ONE_PASS, "--precisions", "fp32"],
    "6-two-groups": [*COMMON, *TWO_GROUPS],
    **{
        f"6-bert-128-docs-g{groups}": [
            *COMMON,
            *("--encoders", "bert-base", "--precisions", "bf16", "--pairs", "declutr-vs-mnrl"),
            *("--length-groups", str(groups), "--call-tokens", "0", "--batch-documents", "128", "--repeats", "5"),
        ]
        for groups in (4, 1)
    },
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


NOW_LABELS = {
    "declutr-vs-mnrl": "DeCLUTR (MLM on) vs MNRL",
    "declutr-contrastive-vs-mnrl": "DeCLUTR contrastive-only vs MNRL",
    "nli-supcon-vs-softmax": "NLI SupCon + CE vs SoftmaxLoss",
    "scale-vs-setfit": "SCALe vs SetFit's step",
}


def ratio(row: dict | None) -> str:
    if row is None:
        return "–"
    text = f"{row['method_over_baseline']:.2f}"
    if row.get("mfu_of_bf16_peak") and row["precision"] == "bf16":
        text += f" (MFU {percent(row['mfu_of_bf16_peak'])}; {percent(row['padded_mfu_of_bf16_peak'])} with padding)"
    return text


def now() -> str:
    """Each step against its sentence-transformers loss with the length groups cut for the fewest tokens."""
    result = run("5-grouped")
    found = {encoder: rows(result, encoder) for encoder in ("minilm", "bert-base")}
    lines = header(
        "step (DeCLUTR: 32 documents, spans ≤ 256 tokens; NLI: 64 pairs; SCALe: 16 questions)",
        "precision",
        "MiniLM-L6: method / baseline",
        "BERT-base-sized",
    )
    for pair, name in NOW_LABELS.items():
        for precision in ("fp32", "bf16"):
            cells = [ratio(found[encoder].get((pair, precision))) for encoder in ("minilm", "bert-base")]
            lines.append(f"| {name if precision == 'fp32' else ''} | {precision} | {' | '.join(cells)} |")
    return "\n".join(lines)


def groups() -> str:
    """DeCLUTR and NLI steps over their sentence-transformers loss at 1, 2 and 4 length groups (– not measured)."""
    # run -> (length groups, DeCLUTR's documents per batch)
    made = {
        "5-one-pass": (1, 32),
        "6-one-pass-fp32": (1, 32),
        "6-bert-128-docs-g1": (1, 128),
        "6-two-groups": (2, 32),
        "5-grouped": (4, 32),
        "6-bert-128-docs-g4": (4, 128),
    }
    cells: dict[tuple, dict[int, dict]] = {}
    for name, (count, documents) in made.items():
        for row in run(name)["rows"]:
            if row["pair"] in ("declutr-vs-mnrl", "nli-supcon-vs-softmax"):
                key = (row["pair"], row["encoder"], row["precision"], documents)
                cells.setdefault(key, {})[count] = row
    lines = header("step over its sentence-transformers loss", "precision", "1 group a column", "2 groups", "4 groups")
    for (pair, encoder, precision, documents), found in sorted(cells.items(), key=lambda item: item[0]):
        batch = f"{documents} documents" if pair == "declutr-vs-mnrl" else "64 pairs"
        label = f"{NOW_LABELS[pair]}, {'MiniLM-L6' if encoder == 'minilm' else 'BERT-base-sized'}, {batch}"
        lines.append(f"| {label} | {precision} | " + " | ".join(ratio(found.get(n)) for n in (1, 2, 4)) + " |")
    return "\n".join(lines)


TABLES = {
    "minilm": minilm,
    "bert-base": bert_base,
    "multiview": multiview,
    "cached-memory": cached_memory,
    "now": now,
    "groups": groups,
}


def main(argv: list[str] | None = None) -> None:
    results_script.run(__file__, __doc__.splitlines()[0], TABLES, argv)


if __name__ == "__main__":
    main()
