"""``python -m benchmarks`` (``make bench``): every benchmark in one run, then one table of the ratios each measured
against its own baseline in the same process, written to benchmarks/results/all.json.

    python -m benchmarks [--only declutr_step cached_memory ...] [--quick]

``--quick`` shrinks every benchmark (fewer repeats, smaller batches) to check that they run, in a few minutes on
2 CPU cores; its figures are not the ones to report.
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import time
from dataclasses import dataclass
from pathlib import Path

import torch


@dataclass(frozen=True)
class Benchmark:
    module: str
    ratio: str
    target: str
    measured: callable  # results -> the ratio
    detail: callable  # results -> the figures behind it
    quick: tuple[str, ...] = ()
    args: tuple[str, ...] = ()  # always passed (the setting the target is stated for)


def percent(share: float) -> str:
    return f"{100 * share:.1f} %"


BENCHMARKS = [
    Benchmark(
        "declutr_step",
        "DeCLUTRLoss(mlm_weight=0) step / MNRL step (same spans)",
        "≤ 0.80",
        lambda r: r["contrastive_only_over_mnrl"],
        lambda r: (
            f"{r['anchors']} anchors, {r['positives']} positives; padding "
            f"{percent(r['padding_share'])} of MNRL's tokens; collation {percent(r['collation_share_of_step'])} of "
            "a step"
        ),
        quick=("--repeats", "3"),
    ),
    Benchmark(
        "declutr_step",
        "DeCLUTRLoss step / MNRL step (same spans, MLM on)",
        "≤ 0.85",
        lambda r: r["declutr_over_mnrl"],
        lambda r: f"MLM head {percent(r['mlm_share_of_flops'])} of the step's FLOPs",
        quick=("--repeats", "3"),
    ),
    Benchmark(
        "declutr_step",
        "MLM's extra: DeCLUTRLoss step / its mlm_weight=0 step − 1",
        "≤ FLOP share + 0.01",
        lambda r: r["declutr_over_contrastive_only"] - 1,
        lambda r: (
            f"the MLM head's FLOP share {r['mlm_share_of_flops']:.3f}: target ≤ {r['mlm_share_of_flops'] + 0.01:.3f}"
        ),
        quick=("--repeats", "3"),
    ),
    Benchmark(
        "nli_supcon_step",
        "NLISupConLoss step / SoftmaxLoss step",
        "≤ 1.2",
        lambda r: r["nli_supcon_over_softmax"],
        lambda r: f"batch {r['batch_size']} pairs",
        ("--repeats", "3", "--batch-size", "32"),
    ),
    Benchmark(
        "cached_memory",
        "CachedDeCLUTRLoss / DeCLUTRLoss peak memory, largest batch",
        "< 1, flat",
        lambda r: r["cached_over_uncached_memory_at_largest"],
        lambda r: (
            f"{r['rows'][0]['anchors']} → {r['rows'][-1]['anchors']} anchors: cached peak ×"
            f"{r['cached_memory_growth_smallest_to_largest']:.2f}, uncached "
            f"{r['rows'][0]['uncached_mib']:,.0f} → {r['rows'][-1]['uncached_mib']:,.0f} MiB; time ×"
            f"{r['cached_over_uncached_time_at_largest']:.2f}; padding sorted/one pass "
            f"{r['padding_sorted_over_one_pass']:.2f} ({r['device']})"
        ),
        ("--anchors", "32", "128"),
    ),
    Benchmark(
        "declutr_throughput",
        "DeCLUTR spans/s: length-sorted / unsorted mini-batches",
        "> 1",
        lambda r: r["sorted_over_unsorted_spans_per_second"][r["rows"][0]["precision"]],
        lambda r: (
            "; ".join(
                f"{x['precision']} {x['setting']} {x['spans_per_second']:.0f}/s {x['peak_mib']:,.0f} MiB"
                for x in r["rows"]
            )
            + f" ({r['device']})"
        ),
        ("--anchors", "16", "--max-length", "64", "--steps", "1", "--mini-batch-size", "8", "--precisions", "fp32"),
    ),
    *(
        Benchmark(
            "tree_lstm_throughput",
            f"Tree-LSTM batched step / its matrix products alone ({cell})",
            "≤ 1.25",
            lambda r, cell=cell: r["cells"][cell]["batched_over_matrix_products"],
            lambda r, cell=cell: f"×{r['cells'][cell]['batched_over_naive']:.0f} the naive per-node recursion",
            quick=("--repeats", "1", "--sentences", "64"),
        )
        for cell in ("child-sum, attention", "binary")
    ),
    Benchmark(
        "parser_throughput",
        "spaCy parse + head projection + binarization, sentences/s",
        "≥ 1,000",
        lambda r: r["sentences_per_second"]["parse_and_binarize"],
        lambda r: (
            f"{r['sentences']:,} book sentences, {r['n_process']} processes; spaCy alone "
            f"{r['sentences_per_second']['spacy_alone']:.0f}/s"
        ),
        ("--sentences", "200"),
        ("--n-process", "2"),
    ),
    Benchmark(
        "supcon_length_groups",
        "SupConLoss step / BatchAllTripletLoss step (same SST-2 batch)",
        "≤ 1",
        lambda r: r["supcon_grouped_over_batch_all_triplet"],
        lambda r: (
            f"{r['supcon']['batch_size']} sentences, padding {percent(r['supcon']['padding_share'])} of a padded "
            f"pass's tokens; length groups / one padded pass ×{r['supcon_grouped_over_padded']:.2f}, peak "
            f"{r['supcon']['grouped']['peak_mib']:.0f} against {r['supcon']['padded']['peak_mib']:.0f} MiB"
        ),
        quick=("--repeats", "3"),
    ),
    Benchmark(
        "supcon_length_groups",
        "SCALeLoss step: length groups / one padded pass per view",
        "< 1",
        lambda r: r["scale_grouped_over_padded"],
        lambda r: (
            f"{r['scale']['batch_size']} sentences × 2 views, padding {percent(r['scale']['padding_share'])}; one "
            f"more encoder call costs {r['call']['call_tokens']:.0f} tokens' work ({r['call']['call_seconds'] * 1000:.0f}"
            " ms)"
        ),
        quick=("--repeats", "3"),
    ),
    Benchmark(
        "supcon_vs_pml",
        "SupConLoss / pytorch-metric-learning SupConLoss",
        "≤ 1",
        lambda r: r["ours_over_pml_at_largest"],
        lambda r: "; ".join(f"{x['rows']:,} rows ×{x['ours_over_pml']:.2f}" for x in r["rows"]),
        ("--repeats", "5"),
    ),
    Benchmark(
        "encode_throughput",
        "encode: DeCLUTR checkpoint / vanilla base",
        "1.00",
        lambda r: r["declutr_over_vanilla"],
        lambda r: f"{r['sentences']:,} sentences, {r['sentences_per_second']['vanilla']:.0f}/s vanilla",
        ("--sentences", "500", "--repeats", "1"),
    ),
    Benchmark(
        "active_round",
        "active learning: acquisition share of a round",
        "small",
        lambda r: r["acquisition_share_of_round"],
        lambda r: f"{r['acquisition']} on a {r['pool']:,}-question TREC pool, {len(r['rounds'])} rounds",
        ("--rounds", "1", "--pool-size", "600"),
    ),
]


def table(results: dict) -> list[dict]:
    """Each benchmark in ``results`` (by module): its ratio, the value measured, its target and the figures behind
    it."""
    return [
        {
            "ratio": bench.ratio,
            "measured": bench.measured(results[bench.module]),
            "target": bench.target,
            "detail": bench.detail(results[bench.module]),
        }
        for bench in BENCHMARKS
        if bench.module in results
    ]


def markdown(rows: list[dict]) -> str:
    """The run's table of ratios, as docs/benchmarks.md shows it."""
    lines = ["| ratio (measured in the same run) | value | target | figures |", "|---|---|---|---|"]
    lines += [f"| {row['ratio']} | {row['measured']:.2f} | {row['target']} | {row['detail']} |" for row in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", nargs="+", choices=[b.module for b in BENCHMARKS], help="run only these")
    parser.add_argument("--quick", action="store_true", help="small settings: a check that all run, not figures")
    parser.add_argument("--output", default="benchmarks/results/all.json", help="JSON of every benchmark's results")
    args = parser.parse_args(argv)
    # A module with several ratios runs once.
    chosen = list({b.module: b for b in BENCHMARKS if not args.only or b.module in args.only}.values())
    results = {}
    for bench in chosen:
        print(f"\n=== {bench.module} ===", flush=True)
        start = time.perf_counter()
        out = importlib.import_module(f"benchmarks.{bench.module}").main(
            [*bench.args, *(bench.quick if args.quick else ()), "--output", f"benchmarks/results/{bench.module}.json"]
        )
        results[bench.module] = out | {"wall_seconds": round(time.perf_counter() - start, 1)}
    machine = {
        "device": torch.cuda.get_device_name() if torch.cuda.is_available() else platform.processor() or "cpu",
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "quick": args.quick,
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    rows = table(results)
    Path(args.output).write_text(json.dumps({"machine": machine, "results": results, "table": rows}, indent=2))
    print("\n" + markdown(rows))
    print(
        f"({machine['device']}, {machine['threads']} threads{'; --quick: not for reporting' if args.quick else ''}; "
        f"all results in {args.output})"
    )
    return results


if __name__ == "__main__":
    main()
