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
from dataclasses import dataclass, replace
from pathlib import Path

from st_contrastive.commands import declutr as declutr_recipe
from st_contrastive.commands import options
from st_contrastive.commands import shared_options as shared
from st_contrastive.commands import supcon as supcon_recipe
from st_contrastive.commands.declutr import DeCLUTRConfig
from st_contrastive.commands.declutr import build_parser as declutr_parser
from st_contrastive.commands.input_checks import SettingChecks
from st_contrastive.commands.options import EVALUATION, TRAINING, option
from st_contrastive.commands.run_folder import comparison_arguments, continue_or_restart
from st_contrastive.config.objectives import NLISupConObjective

ARMS = ("declutr", "supcon", "declutr+supcon")


@dataclass
class ChainConfig:
    """The comparison's own options; every other option is a `st-contrastive declutr` option for the DeCLUTR stage."""

    model: str = option(help="the base every arm starts from (an MLM checkpoint or a SentenceTransformer)")
    declutr_steps: int = option(300, group=TRAINING, help="steps of the DeCLUTR stage")
    supcon_weight: float = option(NLISupConObjective.supcon_weight, group=TRAINING, help="λ of the SupCon + CE stage")
    supcon_steps: int = option(-1, group=TRAINING, help="steps of the SupCon + CE stage (-1: one epoch)")
    eval_tasks: list[str] = shared.eval_tasks(["sts", "transfer"], when="for the base and every arm")
    eval_max_rows: int | None = option(
        None,
        group=EVALUATION,
        help="seeded subset of at most this many rows per transfer task (STS is always evaluated in full; unset: all)",
    )
    output: str = shared.output("runs/chain", help="folder for the arms and the table")


def build_parser() -> argparse.ArgumentParser:
    return options.build_parser(ChainConfig, "st-contrastive chain", __doc__)


def main(argv: list[str] | None = None) -> dict:
    parser = build_parser()
    args, declutr_options = comparison_arguments(parser, ChainConfig, argv)
    declutr = options.config_passed_on(DeCLUTRConfig, declutr_parser(), declutr_options, parser.prog)
    output = Path(args.output)
    declutr = replace(
        declutr,
        model=args.model,
        output=str(output / "declutr"),
        eval_tasks=[],
        training=replace(declutr.training, max_steps=args.declutr_steps),
    )
    supcon = supcon_recipe.SupConNLIConfig(
        model=args.model, supcon_weight=args.supcon_weight, eval_tasks=[], no_base_eval=True
    )
    supcon = replace(supcon, training=replace(supcon.training, max_steps=args.supcon_steps, seed=declutr.training.seed))
    configs = {
        "declutr": declutr,
        "supcon": replace(supcon, output=str(output / "supcon")),
        "declutr+supcon": replace(supcon, model=str(output / "declutr"), output=str(output / "declutr+supcon")),
    }
    # An interrupted arm resumes from its last complete checkpoint; a finished one is read back below.
    configs = {
        arm: replace(config, training=continue_or_restart(config.training, output / arm))
        for arm, config in configs.items()
    }
    check_chain(args, configs)
    # Imported here, not at the top: the parsers must build without torch (instant --help).
    from sentence_transformers import SentenceTransformer

    from st_contrastive.config.evaluation import STS_TASKS, expand_tasks
    from st_contrastive.distributed import is_main_process, join_for_comparison, wait_for_rank_zero
    from st_contrastive.evaluation import averages, evaluate_model, main_score

    output.mkdir(parents=True, exist_ok=True)
    stages = {
        "declutr": lambda: declutr_recipe.train_declutr(configs["declutr"]),
        "supcon": lambda: supcon_recipe.train_supcon_nli(configs["supcon"]),
        "declutr+supcon": lambda: supcon_recipe.train_supcon_nli(configs["declutr+supcon"]),
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
                evaluate_model(encoder, rest, max_rows=args.eval_max_rows) if rest else {}
            )
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

    table = {
        arm: {task: main_score(r) for task, r in result.items()} | averages(result) for arm, result in scores.items()
    }
    (output / "chain.json").write_text(
        json.dumps(
            {
                "model": args.model,
                "declutr_steps": args.declutr_steps,
                "supcon_weight": args.supcon_weight,
                "declutr_options": declutr_options,
                "scores": table,
            },
            indent=2,
        )
    )
    columns = list(next(iter(table.values())))
    lines = ["| arm | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    lines += [f"| {arm} | " + " | ".join(f"{row[c]:.2f}" for c in columns) + " |" for arm, row in table.items()]
    (output / "chain.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return table


def check_chain(args: argparse.Namespace, configs: dict) -> None:
    """The chain's own options and every arm's settings, before the base is evaluated; all problems at once."""
    from st_contrastive.config.evaluation import EvaluationSettings

    checks = SettingChecks()
    checks.model(args.model)
    checks.at_least("--declutr-steps", args.declutr_steps, 1)
    checks.rule(lambda: NLISupConObjective(supcon_weight=args.supcon_weight))
    if not (args.supcon_steps >= 1 or args.supcon_steps == -1):
        checks.add("--supcon-steps", args.supcon_steps, "use a positive number of steps, or -1 for one epoch")
    checks.rule(lambda: options.settings_from(EvaluationSettings, args))
    if Path(args.output).is_file():
        checks.add("--output", args.output, "is a file: pass a folder for the arms")
    # The arms' steps and λ come from the chain's options: checked once, above, under the chain's names.
    for arm, config in configs.items() if not checks.problems else ():
        if (Path(config.output) / "results.json").exists():
            continue  # read back, not retrained
        if arm == "declutr+supcon":  # starts from the declutr arm, which does not exist yet: check its base now
            config = replace(config, model=args.model)
        recipe = declutr_recipe if arm == "declutr" else supcon_recipe
        checks.include(recipe.check_inputs, config)
    checks.done()


if __name__ == "__main__":
    main()
