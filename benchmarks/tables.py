"""The tables of docs/benchmarks.md, printed from the benchmark runs kept in benchmarks/results/kept-*.json.

Each kept file holds only what the tables read of its runs:
- kept-cpu.json: one ``python -m benchmarks`` run (what ``make bench`` runs) on 2 CPU cores, all-MiniLM-L6-v2: its
  table of ratios, CachedDeCLUTRLoss against DeCLUTRLoss by batch size, and the Tree-LSTM cells;
- kept-cached-memory-rows.json: ``python -m benchmarks.cached_memory --model TINY --anchors 256 1024 4096`` on the
  code before CachedDeCLUTRLoss back-propagated NT-Xent a mini-batch of rows at a time (471a0bd, the parent of
  1700f0e) and on the code of e541c90, after it. TINY is ``build_masked_lm(tokenizer, hidden_size=32, num_layers=2,
  num_heads=2)`` from ``st_contrastive.pretraining`` with all-MiniLM-L6-v2's tokenizer, seed 0;
- kept-h200.json: ``python -m benchmarks.gpu_step`` runs on one NVIDIA H200, by run name (GPU_RUNS below gives the
  arguments of each).

    .venv/bin/python benchmarks/tables.py TABLE   # ratios, cached-memory, tree-lstm, cached-memory-rows, gpu-now,
                                                  # gpu-groups or gpu-multiview
    .venv/bin/python benchmarks/tables.py ratios --run benchmarks/results/all.json   # a new make bench run instead

Prints the table as the page shows it. ``--run`` reads a new ``python -m benchmarks`` output for the tables of the CPU
run (ratios, cached-memory, tree-lstm) in place of kept-cpu.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmarks/ is a package of the repository, not of the installed project
KEPT = HERE / "results"

# kept run -> the arguments of `python -m benchmarks.gpu_step --device cuda --base .devcarry/minilm --random-weights`
# that made it (without --output). .devcarry/ held all-MiniLM-L6-v2's config and tokenizer files and a parsed
# Wikipedia sample (benchmarks/gpu_step.py says how); --random-weights builds the encoders from that config.
GPU_RUNS = {
    "3-after-fixes-profiled": "--encoders minilm --pairs scale-vs-setfit nli-supcon-vs-softmax declutr-vs-mnrl "
    "multiview-vs-gru --parsed .devcarry/wiki-parsed.jsonl.gz --cached-anchors 256 1024 4096 --find-syncs --profile",
    "5-grouped": "--call-tokens 0 --pairs declutr-contrastive-vs-mnrl scale-vs-setfit nli-supcon-vs-softmax "
    "declutr-vs-mnrl",
    "5-one-pass": "--length-groups 1 --pairs declutr-vs-mnrl nli-supcon-vs-softmax --encoders bert-base minilm "
    "--precisions bf16",
    "6-one-pass-fp32": "--length-groups 1 --pairs declutr-vs-mnrl nli-supcon-vs-softmax --precisions fp32",
    "6-two-groups": "--length-groups 2 --call-tokens 0 --pairs declutr-vs-mnrl nli-supcon-vs-softmax",
    **{
        f"6-bert-128-docs-g{groups}": f"--encoders bert-base --precisions bf16 --pairs declutr-vs-mnrl --length-groups "
        f"{groups} --call-tokens 0 --batch-documents 128 --repeats 5"
        for groups in (4, 1)
    },
}


def kept(name: str) -> dict:
    return json.loads((KEPT / f"kept-{name}.json").read_text(encoding="utf-8"))


def header(*columns: str) -> list[str]:
    return ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]


def percent(share: float) -> str:
    return f"{100 * share:.1f} %"


# The CPU run: each table takes a `python -m benchmarks` output (the kept one by default).


def ratios(run: dict | None = None) -> str:
    """Every benchmark's ratio against its target, as `make bench` prints it."""
    from benchmarks.__main__ import markdown

    return markdown((run or kept("cpu"))["table"])


def cached_memory(run: dict | None = None) -> str:
    """CachedDeCLUTRLoss against DeCLUTRLoss per batch size."""
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
    for row in (run or kept("cpu"))["results"]["cached_memory"]["rows"]:
        padding = row["padding"]
        lines.append(
            f"| {row['anchors']:,} | {row['spans']:,} | {row['uncached_mib']:,.0f} MiB | "
            f"{row['cached_mib']:,.0f} MiB | {row['uncached_seconds']:.2f} s | {row['cached_seconds']:.2f} s | "
            + " | ".join(percent(padding[kind]) for kind in ("one_pass", "mini_batches", "mini_batches_sorted"))
            + " |"
        )
    return "\n".join(lines)


CELLS = {"child-sum, attention": "attentive child-sum", "binary": "binary"}


def tree_lstm(run: dict | None = None) -> str:
    """The batched Tree-LSTM cells against the naive per-node recursion and against their own matrix products."""
    lines = header(
        "cell",
        "batched",
        "naive per node",
        "batched / naive",
        "the step's matrix products alone",
        "batched step / its products (target ≤ 1.25)",
    )
    for name, cell in (run or kept("cpu"))["results"]["tree_lstm_throughput"]["cells"].items():
        products = cell["median_seconds"]["matrix_products"]
        lines.append(
            f"| {CELLS[name]} | {cell['batched_sentences_per_second']:,.0f} sentences/s | "
            f"{cell['naive_sentences_per_second']:,.0f} sentences/s | {cell['batched_over_naive']:.1f}× | "
            f"{cell['matrix_product_gflop']:.1f} GFLOP in {products * 1000:.1f} ms "
            f"({cell['matrix_product_gflop'] / products:.0f} GFLOP/s) | {cell['batched_over_matrix_products']:.2f} |"
        )
    return "\n".join(lines)


ROWS = {"before": "whole score matrix (before)", "after": "a mini-batch of rows at a time"}


def cached_memory_rows() -> str:
    """CachedDeCLUTRLoss's peak before and after NT-Xent was back-propagated a mini-batch of rows at a time."""
    runs = kept("cached-memory-rows")
    anchors = [row["anchors"] for row in runs["before"]["rows"]]
    lines = header(
        "cached peak",
        *(f"{count:,}" + " anchors" * (i == 0) for i, count in enumerate(anchors)),
        f"growth {anchors[0]:,} → {anchors[-1]:,}",
    )
    for name, label in ROWS.items():
        peaks = [row["cached_mib"] for row in runs[name]["rows"]]
        lines.append(
            f"| {label} | " + " | ".join(f"{peak:,.0f} MiB" for peak in peaks) + f" | {peaks[-1] / peaks[0]:.1f}× |"
        )
    return "\n".join(lines)


# The H200 runs.

LABELS = {
    "declutr-vs-mnrl": "DeCLUTR (MLM on) vs MNRL",
    "declutr-contrastive-vs-mnrl": "DeCLUTR contrastive-only vs MNRL",
    "nli-supcon-vs-softmax": "NLI SupCon + CE vs SoftmaxLoss",
    "scale-vs-setfit": "SCALe vs SetFit's step",
}


def rows(run: dict, encoder: str) -> dict[tuple[str, str], dict]:
    return {(row["pair"], row["precision"]): row for row in run["rows"] if row["encoder"] == encoder}


def ratio(row: dict | None) -> str:
    if row is None:
        return "–"
    text = f"{row['method_over_baseline']:.2f}"
    if row.get("mfu_of_bf16_peak") and row["precision"] == "bf16":
        text += f" (MFU {percent(row['mfu_of_bf16_peak'])}; {percent(row['padded_mfu_of_bf16_peak'])} with padding)"
    return text


def gpu_now() -> str:
    """Each step against its sentence-transformers loss, with the length groups cut for the fewest tokens."""
    run = kept("h200")["5-grouped"]
    found = {encoder: rows(run, encoder) for encoder in ("minilm", "bert-base")}
    lines = header(
        "step (DeCLUTR: 32 documents, spans ≤ 256 tokens; NLI: 64 pairs; SCALe: 16 questions)",
        "precision",
        "MiniLM-L6: method / baseline",
        "BERT-base-sized",
    )
    for pair, name in LABELS.items():
        for precision in ("fp32", "bf16"):
            cells = [ratio(found[encoder].get((pair, precision))) for encoder in ("minilm", "bert-base")]
            lines.append(f"| {name if precision == 'fp32' else ''} | {precision} | {' | '.join(cells)} |")
    return "\n".join(lines)


def gpu_groups() -> str:
    """DeCLUTR and NLI steps over their sentence-transformers loss at 1, 2 and 4 length groups (– not measured)."""
    runs = kept("h200")
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
        for row in runs[name]["rows"]:
            if row["pair"] in ("declutr-vs-mnrl", "nli-supcon-vs-softmax"):
                key = (row["pair"], row["encoder"], row["precision"], documents)
                cells.setdefault(key, {})[count] = row
    lines = header("step over its sentence-transformers loss", "precision", "1 group a column", "2 groups", "4 groups")
    for (pair, encoder, precision, documents), found in sorted(cells.items(), key=lambda item: item[0]):
        batch = f"{documents} documents" if pair == "declutr-vs-mnrl" else "64 pairs"
        label = f"{LABELS[pair]}, {'MiniLM-L6' if encoder == 'minilm' else 'BERT-base-sized'}, {batch}"
        lines.append(f"| {label} | {precision} | " + " | ".join(ratio(found.get(n)) for n in (1, 2, 4)) + " |")
    return "\n".join(lines)


def versus(values: dict) -> str:
    return f"{values['method']:,.0f} vs {values['baseline']:,.0f}"


def gpu_multiview() -> str:
    """A multi-view step (DEP + SEQ) against its bi-GRU-only control (SEQ + SEQ)."""
    found = rows(kept("h200")["3-after-fixes-profiled"], "tree-lstm")
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


CPU_TABLES = {"ratios": ratios, "cached-memory": cached_memory, "tree-lstm": tree_lstm}
TABLES = {
    **CPU_TABLES,
    "cached-memory-rows": cached_memory_rows,
    "gpu-now": gpu_now,
    "gpu-groups": gpu_groups,
    "gpu-multiview": gpu_multiview,
}


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table", choices=list(TABLES), help="the table to print")
    parser.add_argument(
        "--run", type=Path, help="a python -m benchmarks output (all.json) to print a CPU table from instead"
    )
    args = parser.parse_args(argv)
    if args.run and args.table not in CPU_TABLES:
        parser.error(f"--run: {args.table} is not a table of the CPU run ({', '.join(CPU_TABLES)})")
    run = json.loads(args.run.read_text(encoding="utf-8")) if args.run else None
    text = TABLES[args.table](run) if run else TABLES[args.table]()
    print(text)
    return text


if __name__ == "__main__":
    main()
