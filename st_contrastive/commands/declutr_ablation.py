"""DeCLUTR's objective ablation (paper Fig. 3): base vs MLM-only vs contrastive-only vs both, at equal steps, and
sentence-transformers' own unsupervised methods (SimCSE, TSDAE, Contrastive Tension) beside them, at equal steps or
at equal wall time.

    st-contrastive declutr-ablation --model runs/mlm-base --max-steps 300 --eval-steps 50 [any declutr option ...]
    st-contrastive declutr-ablation --variants contrastive-only simcse --temperature 0.1 --output runs/abl-t0.1 ...
    st-contrastive declutr-ablation --variants declutr simcse tsdae ct --max-seconds 120 --max-steps 2000 ...

Every variant starts from the same base with the same seed, data and budget; options not listed here are
`st-contrastive declutr` options and apply to every DeCLUTR variant. A rerun reuses a finished variant trained with
the same settings and resumes an interrupted one; a variant finished with other settings is refused (--overwrite
retrains every variant). `simcse`, `tsdae` and `ct` train sentence-transformers' own losses on sentences cut from
the same documents (`st-contrastive simcse`, `tsdae`, `ct`). At equal steps, `simcse` is DeCLUTR's control: as many
sentences per batch as DeCLUTR has anchors (batch size x anchors), the same τ, learning rate, warm-up and steps.
With --max-seconds (equal wall time), `simcse`, `tsdae` and `ct` run at their own published settings (batch, learning
rate, τ, input length) for the same seconds, --max-steps capping them. Writes <output>/ablation.json (scores, steps,
seconds, rows seen), a table, ablation.png and, with --eval-steps, curves.png (STS-B dev during training).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from st_contrastive.commands import ct as ct_recipe
from st_contrastive.commands import declutr as declutr_recipe
from st_contrastive.commands import options
from st_contrastive.commands import shared_options as shared
from st_contrastive.commands import simcse as simcse_recipe
from st_contrastive.commands import tsdae as tsdae_recipe
from st_contrastive.commands.declutr import DeCLUTRConfig, train_declutr
from st_contrastive.commands.declutr import build_parser as declutr_parser
from st_contrastive.commands.input_checks import SettingChecks
from st_contrastive.commands.options import TRAINING, option
from st_contrastive.commands.run_folder import (
    comparison_arguments,
    continue_or_restart,
    is_finished,
    saved_settings,
    setting_changes,
)

VARIANTS = {
    "mlm-only": {"contrastive_weight": 0.0},
    "contrastive-only": {"mlm_weight": 0.0},
    "declutr": {},
    "simcse": None,  # sentence-transformers' own methods, not DeCLUTR settings: see baseline_config
    "tsdae": None,
    "ct": None,
}
# Each of sentence-transformers' methods: its command's config, its training function, its checks.
BASELINES = {
    "simcse": (simcse_recipe.SimCSEConfig, simcse_recipe.train_simcse, simcse_recipe.check_inputs),
    "tsdae": (tsdae_recipe.TSDAEConfig, tsdae_recipe.train_tsdae, tsdae_recipe.check_inputs),
    "ct": (ct_recipe.CTConfig, ct_recipe.train_ct, ct_recipe.check_inputs),
}
# What a baseline takes from the DeCLUTR settings at its own published settings: the budget and the seed.
SHARED_TRAINING = ("seed", "max_steps", "max_seconds", "epochs", "eval_steps", "save_steps", "bf16", "overwrite")


def baseline_config(name: str, base: DeCLUTRConfig, output: Path):
    """A baseline on the same documents, seed and budget as the DeCLUTR variants. At equal steps SimCSE is DeCLUTR's
    control at its batch budget (sentences per batch = documents x anchors, DeCLUTR's τ and learning rate); with
    ``max_seconds`` (equal wall time), and always for TSDAE and CT, a method runs at its own published settings."""
    config_class = BASELINES[name][0]
    if name == "simcse" and not base.training.max_seconds:
        training = replace(base.training, batch_size=base.training.batch_size * base.num_anchors)
        extra = {"temperature": base.temperature}
    else:
        published = config_class().training
        training = replace(published, **{key: getattr(base.training, key) for key in SHARED_TRAINING})
        extra = {}
    return config_class(
        model=base.model,
        dataset=base.dataset,
        text_field=base.text_field,
        max_rows=base.max_rows,
        output=str(output),
        eval_tasks=base.eval_tasks,
        eval_batch_size=base.eval_batch_size,
        eval_max_rows=base.eval_max_rows,
        training=training,
        **extra,
    )


def variant_configs(base: DeCLUTRConfig, output: Path, names: list[str]) -> dict:
    """Each variant's config in its own folder of ``output``; an interrupted one resumes, and --overwrite
    (``base.training.overwrite``) retrains every one."""
    configs = {}
    for name in names:
        folder = output / name
        config = (
            baseline_config(name, base, folder)
            if name in BASELINES
            else replace(base, output=str(folder), **VARIANTS[name])
        )
        training = continue_or_restart(config.training, folder, retrain=base.training.overwrite)
        configs[name] = replace(config, training=training)
    return configs


def reusable(config) -> bool:
    """A finished variant is reused when it was trained with exactly these settings."""
    folder = Path(config.output)
    saved = saved_settings(folder)
    return is_finished(folder) and saved is not None and setting_changes(saved, asdict(config)) == ([], [])


def check_ablation(args: argparse.Namespace, overwrite: bool, configs: dict) -> None:
    """The ablation's options and every variant's settings, before the base is evaluated; all problems at once."""
    checks = SettingChecks()
    checks.model(args.model)
    if Path(args.output).is_file():
        checks.add("--output", args.output, "is a file: pass a folder for the variants")
    for name, config in configs.items():
        if is_finished(Path(config.output)) and not overwrite:
            if not reusable(config):
                refused, warned = setting_changes(saved_settings(Path(config.output)) or {}, asdict(config))
                differ = "; ".join(refused + warned) or "no settings recorded"
                checks.add(
                    "--output",
                    args.output,
                    f"its variant {name} finished with other settings ({differ}): "
                    "add --overwrite to retrain the variants, or choose another --output",
                )
            continue
        checks.include(BASELINES[name][2] if name in BASELINES else declutr_recipe.check_inputs, config)
    checks.done()


@dataclass
class AblationConfig:
    """The ablation's own options; every other option is a `st-contrastive declutr` option for every variant."""

    model: str = option(help="the MLM-pretrained base every variant starts from")
    variants: list[str] = option(
        ["mlm-only", "contrastive-only", "declutr"],
        group=TRAINING,
        choices=list(VARIANTS),
        help="what to train from the base (the base itself is always evaluated)",
    )
    eval_tasks: list[str] = shared.eval_tasks(
        ["stsb-dev", "stsb-test", "sick-test"], when="for the base and every variant"
    )
    output: str = shared.output("runs/declutr-ablation", help="folder for the variants and the table")


def build_parser() -> argparse.ArgumentParser:
    return options.build_parser(AblationConfig, "st-contrastive declutr-ablation", __doc__)


def main(argv: list[str] | None = None) -> dict:
    parser = build_parser()
    args, declutr_options = comparison_arguments(parser, AblationConfig, argv, refused=("--resume-from-checkpoint",))
    base = options.config_passed_on(DeCLUTRConfig, declutr_parser(), declutr_options, parser.prog)
    base = replace(base, model=args.model, eval_tasks=args.eval_tasks)
    output = Path(args.output)
    configs = variant_configs(base, output, args.variants)
    check_ablation(args, base.training.overwrite, configs)
    # Imported here, not at the top: the parsers must build without torch (instant --help).
    from sentence_transformers import SentenceTransformer

    from st_contrastive.distributed import is_main_process, join_for_comparison, wait_for_rank_zero
    from st_contrastive.evaluation import averages, evaluate_model, main_score
    from st_contrastive.reporting import plot_eval_curves

    output.mkdir(parents=True, exist_ok=True)

    # Under torchrun / accelerate every rank trains each variant; rank 0 alone evaluates and writes.
    join_for_comparison()
    main_process = is_main_process()
    scores = {
        "base (mean pooling)": evaluate_model(
            SentenceTransformer(args.model), args.eval_tasks, max_rows=base.eval_max_rows
        )
        if main_process
        else {}
    }
    curves, seconds, trained = {}, {}, {}
    for name, config in configs.items():
        if reusable(config) and not base.training.overwrite:
            print(f"{name}: reusing {config.output} (same settings)")
            results = json.loads((Path(config.output) / "results.json").read_text())
        elif name in BASELINES:
            results = BASELINES[name][1](config)
        else:
            results = train_declutr(config)
        wait_for_rank_zero()
        if not main_process:
            continue
        scores[name], seconds[name] = results["after"], results["train"]["seconds"]
        trained[name] = trained_amount(results)
        curves[name] = results.get("eval_curves", {})
        if "stsb-dev" in scores["base (mean pooling)"] and "sts-b-dev" in curves[name]:  # the curve starts at the base
            curves[name]["sts-b-dev"].insert(0, [0, main_score(scores["base (mean pooling)"]["stsb-dev"])])

    if not main_process:
        return {}
    table = {
        name: {task: main_score(r) for task, r in result.items()}
        | {"avg": averages(result).get("sts", averages(result).get("transfer"))}
        for name, result in scores.items()
    }
    (output / "ablation.json").write_text(
        json.dumps(
            {
                "model": args.model,
                "declutr_options": declutr_options,
                "scores": table,
                "train_seconds": seconds,
                "trained": trained,
                "eval_curves": curves,
            },
            indent=2,
        )
    )
    if args.eval_tasks:  # `--eval-tasks` with no task only trains the variants: no scores to draw
        plot(table, output / "ablation.png")
    plot_eval_curves(curves, output / "curves.png", title=f"during training: {' '.join(declutr_options)}")
    columns = [*args.eval_tasks, "avg"]
    print(f"{'variant':<22}" + "".join(f"{c:>12}" for c in columns))
    for name, row in table.items():
        print(f"{name:<22}" + "".join(f"{'-':>12}" if row[c] is None else f"{row[c]:>12.2f}" for c in columns))
    return table


def trained_amount(results: dict) -> dict:
    """Steps, seconds and rows seen (documents for DeCLUTR, sentences for the others) of a finished variant."""
    train, training = results["train"], results["config"]["training"]
    rows = train["steps"] * training["batch_size"] * train.get("world_size", 1)
    return {"steps": train["steps"], "seconds": train["seconds"], "batch_size": training["batch_size"], "rows": rows}


def plot(table: dict[str, dict[str, float]], path: Path) -> None:
    from st_contrastive.reporting import pyplot_or_none

    plt = pyplot_or_none(path)
    if plt is None:
        return

    tasks = [t for t in next(iter(table.values())) if t != "avg"]
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.8 / len(table)
    for i, (name, row) in enumerate(table.items()):
        ax.bar([t + i * width for t in range(len(tasks))], [row[t] for t in tasks], width, label=name)
    ax.set_xticks([t + width * (len(table) - 1) / 2 for t in range(len(tasks))], tasks)
    ax.set_ylabel("Spearman x 100")
    ax.set_title("DeCLUTR objective ablation")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
