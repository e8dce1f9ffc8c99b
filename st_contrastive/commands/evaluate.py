"""``st-contrastive evaluate MODEL``: STS and SentEval-style transfer scores of a SentenceTransformer checkpoint."""

from __future__ import annotations

import argparse
import os
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from st_contrastive.commands import options
from st_contrastive.commands import shared_options as shared
from st_contrastive.commands.input_checks import SettingChecks
from st_contrastive.commands.options import EVALUATION, OUTPUT, option
from st_contrastive.config.evaluation import (
    MRPC_FEATURES,
    SEED,
    SHORTCUTS,
    VALID_TASKS,
    EvaluationSettings,
    TransferProtocol,
    expand_tasks,
)

SHORTCUTS_HELP = "; ".join(f"{name} = {' '.join(members)}" for name, members in SHORTCUTS.items())


@dataclass
class EvaluateConfig:
    """``st-contrastive evaluate MODEL``'s options, each field the option of the same name."""

    model: str = option(
        positional=True,
        metavar="MODEL",
        help="a local SentenceTransformer folder or a Hugging Face "
        "Hub id (e.g. sentence-transformers/all-MiniLM-L6-v2)",
    )
    eval_tasks: list[str] = option(
        ["sts", "transfer"],
        group=EVALUATION,
        metavar="TASK",
        help=f"tasks to run, any of: {', '.join(VALID_TASKS)}; shortcuts: {SHORTCUTS_HELP}",
    )
    eval_batch_size: int = shared.eval_batch_size()
    eval_folds: int = option(
        10,
        group=EVALUATION,
        help="cross-validation folds (10, as "
        "SentEval): outer folds for MR/CR/SUBJ/MPQA, C-selection folds on train for TREC/MRPC",
    )
    inner_folds: int | None = option(
        None,
        group=EVALUATION,
        help="folds that pick C inside each outer fold of MR/CR/SUBJ/MPQA (unset: same as --eval-folds, as SentEval)",
    )
    eval_max_rows: int | None = option(
        None,
        group=EVALUATION,
        help="quick runs only: the first N pairs of each STS split, a seeded random N rows of each transfer split",
    )
    mrpc_features: str = option(
        "senteval",
        group=EVALUATION,
        choices=MRPC_FEATURES,
        help="MRPC pair features: senteval = (|u-v|, u*v) as SentEval's code; full = (u, v, |u-v|, u*v)",
    )
    seed: int = option(
        SEED, group=EVALUATION, help="seed of the CV fold shuffling and of --eval-max-rows (1111, as SentEval)"
    )
    device: str | None = option(None, help="torch device such as cpu, cuda, cuda:1 or mps (unset: auto)")
    trust_remote_code: bool = option(
        False, help="allow custom modules in the checkpoint (needed for multi-view checkpoints of this plugin)"
    )
    num_threads: int | None = option(
        None,
        help="torch intra-op threads (unset: torch's choice); on a CPU shared with "
        "other jobs 1 can be faster (encoding was 2x faster with 1 than with 2 on 2 busy "
        "cores)",
    )
    no_progress: bool = option(False, group=OUTPUT, help="hide the progress bar over tasks")
    output: str | None = option(
        None,
        group=OUTPUT,
        help="where to write the JSON results (unset: "
        "MODEL/evaluation_results.json when MODEL is a local folder, else "
        "./evaluation_results.json)",
    )


def build_parser() -> argparse.ArgumentParser:
    return options.build_parser(
        EvaluateConfig,
        "st-contrastive evaluate",
        "Evaluate a SentenceTransformer on STS (cosine Spearman x 100) and SentEval-style transfer tasks (logistic "
        "regression on frozen embeddings, test accuracy x 100), print a table and write JSON.",
    )


def default_output(model: str) -> Path:
    return Path(model) / "evaluation_results.json" if Path(model).is_dir() else Path("evaluation_results.json")


def transfer_protocol(args: EvaluateConfig):
    """How the transfer tasks are validated, as the options say (its rules refuse a bad one)."""

    return TransferProtocol(args.eval_folds, args.inner_folds, args.mrpc_features, args.seed)


def check_inputs(args: EvaluateConfig) -> None:
    """Every option, from the arguments alone and before the model loads; all problems at once (a
    ``SettingError``)."""
    checks = SettingChecks()
    checks.model(args.model, "MODEL")
    checks.rule(lambda: options.settings_from(EvaluationSettings, args))
    if args.output and Path(args.output).is_dir():
        checks.add("--output", args.output, "is a folder: name the JSON file to write")
    if args.device is not None and not re.fullmatch(r"(cpu|cuda|mps|xpu|npu|hpu)(:\d+)?", args.device):
        checks.add("--device", args.device, "use cpu, cuda, cuda:N, mps, xpu or npu")
    checks.rule(lambda: transfer_protocol(args), folds="--eval-folds")
    checks.at_least("--num-threads", args.num_threads, 1)
    checks.done()


def main(argv: list[str] | None = None) -> dict[str, dict]:
    args = options.config_from_args(EvaluateConfig, build_parser().parse_args(argv))
    check_inputs(args)  # a bad task name or path fails here, before a model loads
    tasks = expand_tasks(args.eval_tasks)
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
    protocol = transfer_protocol(args)
    results = evaluate_model(
        model, tasks, args.eval_batch_size, args.eval_max_rows, protocol, show_progress=not args.no_progress
    )
    seconds = round(time.perf_counter() - start, 1)
    print(format_results_table(results))
    settings = {k: v for k, v in asdict(args).items() if k not in ("model", "eval_tasks", "output", "no_progress")}
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
