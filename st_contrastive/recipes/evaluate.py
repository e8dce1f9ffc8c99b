"""``st-contrastive evaluate MODEL``: STS and SentEval-style transfer scores of a SentenceTransformer checkpoint."""

from __future__ import annotations

import argparse
import os
import re
import time
from pathlib import Path

from st_contrastive.evaluation.protocol import (
    MRPC_FEATURES,
    SEED,
    SHORTCUTS,
    VALID_TASKS,
    TransferProtocol,
    expand_tasks,
)
from st_contrastive.recipes.input_checks import SettingChecks


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="st-contrastive evaluate",
        description=(
            "Evaluate a SentenceTransformer on STS (cosine Spearman x 100) and SentEval-style transfer tasks "
            "(logistic regression on frozen embeddings, test accuracy x 100), print a table and write JSON."
        ),
    )
    parser.add_argument(
        "model",
        metavar="MODEL",
        help="a local SentenceTransformer folder or a Hugging Face Hub id (e.g. sentence-transformers/all-MiniLM-L6-v2)",
    )
    shortcuts = "; ".join(f"{name} = {' '.join(members)}" for name, members in SHORTCUTS.items())
    parser.add_argument(
        "--tasks",
        nargs="+",
        default=["sts", "transfer"],
        metavar="TASK",
        help=f"tasks to run (default: sts transfer), any of: {', '.join(VALID_TASKS)}; shortcuts: {shortcuts}",
    )
    parser.add_argument(
        "--output",
        default=None,
        help="where to write the JSON results (default: MODEL/evaluation_results.json when MODEL is a local "
        "folder, else ./evaluation_results.json)",
    )
    parser.add_argument("--batch-size", type=int, default=64, help="encoding batch size (default: 64)")
    parser.add_argument("--device", default=None, help="torch device such as cpu, cuda, cuda:1 or mps (default: auto)")
    parser.add_argument(
        "--folds",
        type=int,
        default=10,
        help="cross-validation folds (default: 10, as SentEval): outer folds for MR/CR/SUBJ/MPQA, C-selection folds "
        "on train for TREC/MRPC",
    )
    parser.add_argument(
        "--inner-folds",
        type=int,
        default=None,
        help="folds that pick C inside each outer fold of MR/CR/SUBJ/MPQA (default: same as --folds, as SentEval)",
    )
    parser.add_argument(
        "--max-rows",
        type=int,
        default=None,
        help="quick runs only: the first N pairs of each STS split, a seeded random N rows of each transfer split",
    )
    parser.add_argument(
        "--mrpc-features",
        choices=MRPC_FEATURES,
        default="senteval",
        help="MRPC pair features: senteval = (|u-v|, u*v) as SentEval's code (default); full = (u, v, |u-v|, u*v)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=SEED,
        help="seed of the CV fold shuffling and of --max-rows (default: 1111, as SentEval)",
    )
    parser.add_argument(
        "--trust-remote-code",
        action="store_true",
        help="allow custom modules in the checkpoint (needed for multi-view checkpoints of this plugin)",
    )
    parser.add_argument(
        "--num-threads",
        type=int,
        default=None,
        help="torch intra-op threads (default: torch's choice); on a CPU shared with other jobs 1 can be faster "
        "(encoding was 2x faster with 1 than with 2 on 2 busy cores)",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar over tasks")
    return parser


def default_output(model: str) -> Path:
    return Path(model) / "evaluation_results.json" if Path(model).is_dir() else Path("evaluation_results.json")


def check_inputs(args: argparse.Namespace) -> None:
    """Every option, from the arguments alone and before the model loads; all problems at once (a
    ``SettingError``)."""
    checks = SettingChecks()
    checks.model(args.model, "MODEL")
    checks.call("--tasks", args.tasks, lambda: expand_tasks(args.tasks))
    if args.output and Path(args.output).is_dir():
        checks.add("--output", args.output, "is a folder: name the JSON file to write")
    checks.at_least("--batch-size", args.batch_size, 1)
    if args.device is not None and not re.fullmatch(r"(cpu|cuda|mps|xpu|npu|hpu)(:\d+)?", args.device):
        checks.add("--device", args.device, "use cpu, cuda, cuda:N, mps, xpu or npu")
    checks.at_least("--folds", args.folds, 2)
    checks.at_least("--inner-folds", args.inner_folds, 2)
    checks.at_least("--max-rows", args.max_rows, 1)
    checks.seed("--seed", args.seed)
    checks.at_least("--num-threads", args.num_threads, 1)
    checks.done()


def main(argv: list[str] | None = None) -> dict[str, dict]:
    args = build_parser().parse_args(argv)
    check_inputs(args)  # a bad task name or path fails here, before a model loads
    tasks = expand_tasks(args.tasks)
    # Imported here, not at the top: the parser above must build without torch (instant --help).
    import torch
    from sentence_transformers import SentenceTransformer

    from st_contrastive.evaluation import evaluate_model
    from st_contrastive.reporting import format_results_table, write_results_json


    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if args.num_threads:
        torch.set_num_threads(args.num_threads)
    model = SentenceTransformer(args.model, device=args.device, trust_remote_code=args.trust_remote_code)
    start = time.perf_counter()
    protocol = TransferProtocol(args.folds, args.inner_folds, args.mrpc_features, args.seed)
    results = evaluate_model(model, tasks, args.batch_size, args.max_rows, protocol, show_progress=not args.no_progress)
    seconds = round(time.perf_counter() - start, 1)
    print(format_results_table(results))
    settings = {k: v for k, v in vars(args).items() if k not in ("model", "tasks", "output", "no_progress")}
    path = write_results_json(
        results,
        args.output or default_output(args.model),
        model=args.model,
        tasks=tasks,
        settings=settings,
        seconds=seconds,
    )
    print(f"{len(results)} tasks in {seconds:.0f} s; results written to {path}")
    return results


if __name__ == "__main__":
    main()
