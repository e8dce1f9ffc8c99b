"""The paper's sweep (Tables 2 and 3): the CE-only baseline against SupCon + CE for each λ and candidate setting.

    st-contrastive supcon-sweep --model PATH_OR_HUB_ID [--supcon-weight 0 0.1 0.3 0.5 1.0] [--candidates 3p3n allpalln]

Every variant starts from the same base with the same seed, data and settings; options not listed here are
`st-contrastive supcon` options and apply to every variant. λ=0 is the CE-only baseline and runs once. A variant whose `results.json` already
exists in the output folder is read back, not retrained (`--rerun` retrains), and evaluated on any of `--eval-tasks`
it lacks: an interrupted sweep resumes, several sweeps over disjoint `--supcon-weight` share one folder, and transfer can
be added to a finished STS-only sweep. Writes <output>/sweep.json, sweep.md and sweep.png.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path

from st_contrastive.commands import options
from st_contrastive.commands import shared_options as shared
from st_contrastive.commands.input_checks import SettingChecks
from st_contrastive.commands.options import OUTPUT, TRAINING, option, settings_from
from st_contrastive.commands.run_folder import comparison_arguments, continue_or_restart
from st_contrastive.commands.supcon import SupConNLIConfig, check_inputs, train_supcon_nli
from st_contrastive.commands.supcon import build_parser as supcon_parser
from st_contrastive.config.evaluation import EvaluationSettings, averages, expand_tasks, main_score
from st_contrastive.config.objectives import NLISupConObjective
from st_contrastive.default_model import default_model

BASELINE = "ce-only"


def candidates(value: str) -> tuple[str | int, str | int]:
    """``"3p3n"`` -> (3, 3), ``"allpalln"`` -> ("all", "all"): positives and negatives per anchor, the paper's names."""
    match = re.fullmatch(r"(all|\d+)p(all|\d+)n", value)
    if not match:
        raise argparse.ArgumentTypeError(f"{value!r} is not <P>p<N>n with P, N = all or a number (3p3n, allpalln)")
    return tuple(part if part == "all" else int(part) for part in match.groups())


def variants(weights: list[float], settings: list[tuple]) -> dict[str, dict]:
    """Variant name -> the `SupConNLIConfig` fields it sets; λ=0 (CE only) ignores the candidates and appears once."""
    runs = {}
    for weight in weights:
        if weight == 0:
            runs[BASELINE] = {"supcon_weight": 0.0}
            continue
        for positives, negatives in settings:
            runs[f"{positives}p{negatives}n-lambda{weight:g}"] = {
                "supcon_weight": weight,
                "positives": positives,
                "negatives": negatives,
            }
    return runs


@dataclass
class SweepConfig:
    """The sweep's own options; every other option is a `st-contrastive supcon` option for every variant."""

    model: str | None = shared.model("the base every variant starts from; " + shared.DEFAULT_MODEL_HELP)
    supcon_weight: list[float] = option(
        [0, 0.1, 0.3, 0.5, 1.0],
        group=TRAINING,
        help="the λ values swept; 0 is the CE-only baseline",
    )
    candidates: list[tuple] = option(
        [(3, 3), ("all", "all")],
        group=TRAINING,
        type=candidates,
        help="positives/negatives per anchor as <P>p<N>n: 3p3n, allpalln, 3palln, ...",
    )
    eval_tasks: list[str] = shared.eval_tasks(["sts", "transfer"], when="for the base and every variant")
    eval_max_rows: int | None = shared.eval_max_rows()
    no_base_eval: bool = shared.no_base_eval()
    rerun: bool = option(False, group=OUTPUT, help="retrain variants that already have results")
    output: str = shared.output("runs/supcon-sweep", help="folder for the variants and the table")


def build_parser() -> argparse.ArgumentParser:
    return options.build_parser(SweepConfig, "st-contrastive supcon-sweep", __doc__)


def main(argv: list[str] | None = None) -> dict:
    parser = build_parser()
    args, supcon_options = comparison_arguments(parser, SweepConfig, argv)
    swept = {"--positives", "--negatives"} & {argument.split("=")[0] for argument in supcon_options}
    if swept:
        parser.error(f"{', '.join(sorted(swept))} are swept: use --candidates")
    output = Path(args.output)
    model = args.model or default_model()
    base_config = replace(
        options.config_passed_on(SupConNLIConfig, supcon_parser(), supcon_options, parser.prog),
        model=model,
        eval_tasks=args.eval_tasks,
        eval_max_rows=args.eval_max_rows,
        no_base_eval=True,
    )
    runs = {
        name: variant_config(base_config, output, name, changes, args.rerun)
        for name, changes in variants(args.supcon_weight, args.candidates).items()
    }
    check_sweep(args, runs)
    output.mkdir(parents=True, exist_ok=True)

    # Under torchrun / accelerate every rank trains each variant; rank 0 alone evaluates and writes.
    from st_contrastive.distributed import is_main_process, join_for_comparison, wait_for_rank_zero

    join_for_comparison()
    main_process = is_main_process()
    scores = {}
    base_file = output / "base.json"
    if not args.no_base_eval and main_process:
        base = json.loads(base_file.read_text()) if base_file.exists() and not args.rerun else {}
        scores["base"] = base | evaluate_missing(model, base, args.eval_tasks, args.eval_max_rows)
        base_file.write_text(json.dumps(scores["base"], indent=2))
    for name, config in runs.items():
        results_file = output / name / "results.json"
        if results_file.exists() and not args.rerun:
            if main_process:
                print(f"{name}: reusing {results_file}")
                add_missing_tasks(results_file, args.eval_tasks, args.eval_max_rows)
        else:
            train_supcon_nli(config)
        wait_for_rank_zero()  # a variant's results.json exists for every rank, or for none
    if not main_process:
        return {}

    # Every finished variant in the folder goes into the table, also those of a parallel sweep.
    finished = {path.parent.name for path in output.glob("*/results.json")}
    for name in [*runs, *sorted(finished - set(runs))]:
        scores[name] = json.loads((output / name / "results.json").read_text())["after"]
    table = summarize(scores)
    (output / "sweep.json").write_text(
        json.dumps({"model": model, "supcon_options": supcon_options, "scores": table, "results": scores}, indent=2)
    )
    (output / "sweep.md").write_text(format_table(table) + "\n")
    plot(table, output / "sweep.png")
    print(format_table(table))
    return table


def variant_config(base: SupConNLIConfig, output: Path, name: str, changes: dict, rerun: bool) -> SupConNLIConfig:
    """A variant's run: resumed when it was interrupted, retrained from scratch with --rerun."""
    folder = output / name
    return replace(
        base, output=str(folder), **changes, training=continue_or_restart(base.training, folder, retrain=rerun)
    )


def check_sweep(args: argparse.Namespace, runs: dict[str, SupConNLIConfig]) -> None:
    """The sweep's own options and every variant's settings, before the base is evaluated; all problems at once."""
    checks = SettingChecks()
    checks.model(args.model)
    checks.rule(lambda: settings_from(EvaluationSettings, args))
    for weight in args.supcon_weight:
        checks.rule(lambda weight=weight: NLISupConObjective(supcon_weight=weight))
    if Path(args.output).is_file():
        checks.add("--output", args.output, "is a file: pass a folder for the variants")
    for config in runs.values():
        reused = (Path(config.output) / "results.json").exists() and not args.rerun
        if reused or checks.problems:  # a bad weight is named once, above, not once per variant
            continue
        checks.include(check_inputs, config)
    checks.done()


def evaluate_missing(model: str, done: dict[str, dict], tasks: list[str], max_rows: int | None) -> dict[str, dict]:
    """Scores of the tasks in ``tasks`` that ``done`` lacks (e.g. transfer added to a finished sweep)."""
    from sentence_transformers import SentenceTransformer

    from st_contrastive.evaluation import evaluate_model

    missing = [task for task in expand_tasks(tasks) if task not in done]
    return evaluate_model(SentenceTransformer(model), missing, max_rows=max_rows) if missing else {}


def add_missing_tasks(results_file: Path, tasks: list[str], max_rows: int | None) -> None:
    """Evaluate a finished variant's checkpoint on the tasks its ``results.json`` lacks and write them into it."""
    results = json.loads(results_file.read_text())
    missing = evaluate_missing(str(results_file.parent), results["after"], tasks, max_rows)
    if missing:
        results["after"] |= missing
        results["after_averages"] = averages(results["after"])
        results_file.write_text(json.dumps(results, indent=2, default=str))
        from st_contrastive.publishing import write_model_card

        write_model_card(results_file.parent)  # its model-index lists the scores just added


def summarize(scores: dict[str, dict]) -> dict[str, dict[str, float]]:
    """Per variant: each task's main score, the STS and transfer averages, and their change against CE only."""
    table = {
        name: {task: main_score(r) for task, r in result.items()} | {f"{g} avg": v for g, v in averages(result).items()}
        for name, result in scores.items()
    }
    if BASELINE in table:
        for row in table.values():
            for group in ("sts avg", "transfer avg"):
                if group in row and group in table[BASELINE]:
                    row[f"{group} vs CE"] = row[group] - table[BASELINE][group]
    return table


def format_table(table: dict[str, dict[str, float]]) -> str:
    """A Markdown table, one row per variant, scores x 100."""
    columns = list(dict.fromkeys(column for row in table.values() for column in row))
    lines = ["| variant | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for name, row in table.items():
        cells = [f"{row[c]:+.2f}" if c.endswith("vs CE") else f"{row[c]:.2f}" if c in row else "" for c in columns]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(table: dict[str, dict[str, float]], path: Path) -> None:
    """STS and transfer averages per variant, with the CE-only baseline as a line."""
    from st_contrastive.reporting import pyplot_or_none

    plt = pyplot_or_none(path)
    if plt is None:
        return

    groups = [g for g in ("sts avg", "transfer avg") if any(g in row for row in table.values())]
    fig, axes = plt.subplots(1, len(groups), figsize=(6 * len(groups), 4), squeeze=False)
    for ax, group in zip(axes[0], groups):
        names = [name for name, row in table.items() if group in row]
        ax.barh(
            names,
            [table[name][group] for name in names],
            color=["tab:gray" if n in ("base", BASELINE) else "tab:blue" for n in names],
        )
        if BASELINE in table and group in table[BASELINE]:
            ax.axvline(table[BASELINE][group], color="tab:red", linestyle="--", label="CE only")
            ax.legend(fontsize=8)
        values = [table[name][group] for name in names]
        ax.set_xlim(min(values) - 2, max(values) + 1)
        ax.set_xlabel(f"{group} (x 100)")
        ax.invert_yaxis()
    fig.suptitle("SupCon + CE on NLI: λ and candidates against CE only")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
