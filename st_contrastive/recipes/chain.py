"""Beyond the papers: DeCLUTR pretraining followed by SupCon + CE fine-tuning, against each stage alone.

    st-contrastive chain --model runs/mlm-base --declutr-steps 300 --output runs/chain [any declutr option ...]

Three arms from the same base; a stage has the same settings and steps in every arm it appears in:

    declutr          base -> DeCLUTR
    supcon           base -> SupCon + CE (the paper's defaults: SNLI dev+test, one epoch, λ = --supcon-weight)
    declutr+supcon   base -> DeCLUTR -> SupCon + CE (its first stage is the declutr arm's checkpoint)

The base and every arm are evaluated on --eval-tasks (STS-B, SICK-R and the transfer tasks). A finished arm is
read back, not retrained, so an interrupted chain resumes. Writes <output>/chain.json and chain.md.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from st_contrastive.recipes.declutr import DeCLUTRConfig
from st_contrastive.recipes.declutr import build_parser as declutr_parser
from st_contrastive.recipes.push import refuse_push_in_comparison

ARMS = ("declutr", "supcon", "declutr+supcon")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="st-contrastive chain", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="the base every arm starts from (an MLM checkpoint or a "
                        "SentenceTransformer)")
    parser.add_argument("--declutr-steps", type=int, default=300, help="steps of the DeCLUTR stage")
    parser.add_argument("--supcon-weight", type=float, default=0.3, help="λ of the SupCon + CE stage")
    parser.add_argument("--supcon-steps", type=int, default=-1, help="steps of the SupCon + CE stage (-1: one epoch)")
    parser.add_argument("--output", default="runs/chain", help="folder for the arms and the table")
    parser.add_argument("--eval-tasks", nargs="*", default=["sts", "transfer"], help="tasks compared")
    parser.add_argument("--eval-max-rows", type=int, default=None, help="seeded subset of at most this many rows per "
                        "transfer task (STS is always evaluated in full; unset: all)")
    args, declutr_options = parser.parse_known_args(argv)
    refuse_push_in_comparison(parser, declutr_options)
    declutr = DeCLUTRConfig.from_args(declutr_parser().parse_args(declutr_options))
    # Imported here, not at the top: the parsers must build without torch (instant --help).
    from sentence_transformers import SentenceTransformer

    from st_contrastive.evaluation import averages, evaluate_model, main_score
    from st_contrastive.evaluation.protocol import STS_TASKS, expand_tasks
    from st_contrastive.recipes.declutr import train_declutr
    from st_contrastive.recipes.supcon_nli import SupConNLIConfig, train_supcon_nli
    from st_contrastive.training.distributed import is_main_process, join_for_comparison, wait_for_rank_zero

    output = Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    declutr = replace(declutr, model=args.model, output=str(output / "declutr"), eval_tasks=[],
                      training=replace(declutr.training, max_steps=args.declutr_steps))
    supcon = SupConNLIConfig(model=args.model, supcon_weight=args.supcon_weight, eval_tasks=[], skip_before=True)
    supcon = replace(supcon, training=replace(supcon.training, max_steps=args.supcon_steps, seed=declutr.training.seed))

    stages = {
        "declutr": lambda: train_declutr(declutr),
        "supcon": lambda: train_supcon_nli(replace(supcon, output=str(output / "supcon"))),
        "declutr+supcon": lambda: train_supcon_nli(replace(supcon, model=str(output / "declutr"),
                                                           output=str(output / "declutr+supcon"))),
    }
    def scores_of(model: str, path: Path) -> dict:
        """Evaluate once; a rerun reads the scores back (re-evaluated if the tasks or row limit changed)."""
        saved = json.loads(path.read_text()) if path.exists() else {}
        tasks = {"tasks": args.eval_tasks, "max_rows": args.eval_max_rows}
        if {key: saved.get(key) for key in tasks} != tasks:
            encoder = SentenceTransformer(model)
            sts = [task for task in expand_tasks(args.eval_tasks) if task in STS_TASKS]  # always in full
            rest = [task for task in expand_tasks(args.eval_tasks) if task not in STS_TASKS]
            scores = (evaluate_model(encoder, sts) if sts else {}) | (
                evaluate_model(encoder, rest, max_rows=args.eval_max_rows) if rest else {})
            saved = tasks | {"scores": scores}
            path.write_text(json.dumps(saved, indent=2))
        return saved["scores"]

    # Under torchrun / accelerate every rank trains each stage; rank 0 alone evaluates and writes, and the others
    # wait for it before they read what it saved (declutr+supcon starts from the declutr arm's checkpoint).
    join_for_comparison()
    main_process = is_main_process()
    scores = {"base": scores_of(args.model, output / "base_scores.json")} if main_process else {}
    for arm in ARMS:  # in this order: declutr+supcon starts from the declutr arm
        if not (output / arm / "results.json").exists():
            stages[arm]()
        if main_process:
            scores[arm] = scores_of(str(output / arm), output / arm / "chain_scores.json")
        wait_for_rank_zero()
    if not main_process:
        return {}

    table = {arm: {task: main_score(r) for task, r in result.items()} | averages(result)
             for arm, result in scores.items()}
    (output / "chain.json").write_text(json.dumps({"model": args.model, "declutr_steps": args.declutr_steps,
                                                   "supcon_weight": args.supcon_weight, "declutr_options":
                                                   declutr_options, "scores": table}, indent=2))
    columns = list(next(iter(table.values())))
    lines = ["| arm | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    lines += [f"| {arm} | " + " | ".join(f"{row[c]:.2f}" for c in columns) + " |" for arm, row in table.items()]
    (output / "chain.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return table


if __name__ == "__main__":
    main()
