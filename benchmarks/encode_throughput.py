"""Encoding throughput of a DeCLUTR checkpoint against the same base in vanilla sentence-transformers.

A DeCLUTR checkpoint is a plain Transformer + Pooling model, so the ratio should be 1.00: training with the plugin
adds nothing to inference. The checkpoint is made here by two DeCLUTR steps on the base.

    python benchmarks/encode_throughput.py [--model PATH] [--sentences 2000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from sentence_transformers import SentenceTransformer

from st_contrastive.evaluation.sts import load_sts


def sentences_per_second(model: SentenceTransformer, sentences: list[str], repeats: int) -> float:
    model.encode(sentences[:64], batch_size=64)  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        model.encode(sentences, batch_size=64)
        times.append(time.perf_counter() - start)
    return len(sentences) / statistics.median(times)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="base model path or Hub id (default all-MiniLM-L6-v2)")
    parser.add_argument("--sentences", type=int, default=2000, help="STS-B train sentences to encode")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes per model (median)")
    parser.add_argument("--output", default="benchmarks/results/encode_throughput.json", help="JSON results path")
    args = parser.parse_args(argv)
    from st_contrastive.commands.declutr import main as declutr
    from st_contrastive.default_model import default_model

    base = args.model or default_model()
    first, second, _ = load_sts("stsb", "train")
    sentences = (first + second)[: args.sentences]
    with tempfile.TemporaryDirectory() as folder:
        declutr(
            [
                "--model",
                base,
                "--dataset",
                "wiki",
                "--max-rows",
                "8",
                "--max-steps",
                "2",
                "--batch-size",
                "2",
                "--max-span-length",
                "64",
                "--min-span-length",
                "16",
                "--no-eval",
                "--save-steps",
                "0",
                "--output",
                folder,
            ]
        )
        trained = SentenceTransformer(folder, device="cpu")
        vanilla = SentenceTransformer(base, device="cpu")
        vanilla.max_seq_length = trained.max_seq_length  # a plain transformers base would otherwise truncate elsewhere
        rates = {}
        for step in range(2):  # alternate, so neither profits from a warmer machine
            for name, model in (("declutr", trained), ("vanilla", vanilla))[:: 1 if step else -1]:
                rates.setdefault(name, []).append(sentences_per_second(model, sentences, args.repeats))
    rate = {name: max(values) for name, values in rates.items()}
    summary = {
        "model": args.model or "all-MiniLM-L6-v2",
        "sentences": len(sentences),
        "sentences_per_second": rate,
        "declutr_over_vanilla": rate["declutr"] / rate["vanilla"],
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(summary, indent=2))
    print(
        f"encode: DeCLUTR checkpoint {rate['declutr']:.0f} sentences/s, vanilla base {rate['vanilla']:.0f} "
        f"sentences/s, ratio {summary['declutr_over_vanilla']:.2f} (target 1.00)"
    )
    return summary


if __name__ == "__main__":
    main()
