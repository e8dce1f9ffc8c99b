"""SCALe: active learning for text classification with dropout-view SupCon + CE, against CE only, siamese
pre-training, SetFit (at equal steps and at its defaults) and logistic regression on the frozen base, on the same
labelled sets; optionally also at equal wall time with SetFit at its defaults.

    st-contrastive active --dataset trec --objective supcon-ce ce --acquisition random entropy --num-seeds 3 \\
        --reference setfit setfit-defaults logreg --equal-compute --output runs/al-trec
    st-contrastive active --dataset my_texts.csv --oracle human --output runs/my-labels   # writes a file to label
    st-contrastive active --resume-from-checkpoint runs/my-labels --push-to-hub me/my-classifier         # after filling it in
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from st_contrastive.active.settings import ActiveLearningConfig, only_adds_arms
from st_contrastive.commands import options
from st_contrastive.commands import shared_options as shared
from st_contrastive.commands.input_checks import SettingChecks, SettingError
from st_contrastive.commands.library_messages import options_by_argument, said_as_options
from st_contrastive.commands.options import OUTPUT, option
from st_contrastive.commands.push import check_push, publish
from st_contrastive.commands.run_folder import setting_changes
from st_contrastive.config.scale import WARM_START_MIN_PER_CLASS, RoundTraining
from st_contrastive.data_dir import SHARED_TEXT_CLASSIFICATION

logger = logging.getLogger(__name__)
ROUNDS = RoundTraining()  # the defaults the description names


@dataclass
class ActiveCommand:
    """``st-contrastive active``: an experiment (or the run folder to continue) and where to publish its model."""

    experiment: ActiveLearningConfig = field(default_factory=ActiveLearningConfig)
    resume_from_checkpoint: str | None = option(
        None,
        group=OUTPUT,
        metavar="RUN_DIR",
        help="continue the run in RUN_DIR with its own settings (after "
        "labelling its queries file, or after a crash); other options are "
        "ignored",
    )
    # Also with --resume-from-checkpoint: publish the model of the last round once the budget is reached.
    push_to_hub: str | None = shared.push_to_hub()

    # The experiment's settings name a list of each; the command line takes one or more values per flag.
    option_flags: ClassVar[dict[str, str]] = {
        "objectives": "--objective",
        "acquisitions": "--acquisition",
        "references": "--reference",
    }


def build_parser() -> argparse.ArgumentParser:
    return options.build_parser(
        ActiveCommand,
        "st-contrastive active",
        "Active learning (SCALe): a random seed set, then rounds that train, evaluate on the test split and acquire "
        "more rows, up to a budget. The paper's settings (1 % seed set, 1 % per round, 15 % budget, batch 16, lr 2e-5, "
        "λ=0.9, τ=0.3), except what was chosen on dev splits (recipes/scale-against-setfit): a round starts from the base "
        f"model for {ROUNDS.from_base_epochs:g} epochs until the last round had {WARM_START_MIN_PER_CLASS} "
        f"labels a class, then continues from the last one's model for {ROUNDS.epochs:g}, with a view per dropout rate "
        f"of {' '.join(f'{rate:g}' for rate in ROUNDS.dropout_rates)} (the paper: 0 0.1 0.2 0.3 0.4), and acquires "
        "by k-means (the paper: entropy).",
    )


def config_from_args(args: argparse.Namespace) -> ActiveLearningConfig:
    command = options.config_from_args(ActiveCommand, args)
    if command.resume_from_checkpoint:
        path = Path(command.resume_from_checkpoint) / "config.json"
        if not path.exists():
            problem = (
                f"--resume-from-checkpoint {command.resume_from_checkpoint}: no config.json there (not a run "
                "folder of this command)"
            )
            raise SettingError([problem])
        config = ActiveLearningConfig.from_json(json.loads(path.read_text()))
        config.output = command.resume_from_checkpoint  # the folder as given, from wherever the run was started
        return config
    return command.experiment


def check_inputs(config: ActiveLearningConfig, push_to_hub: str | None = None) -> None:
    """Every setting, from the arguments alone and before anything heavy loads; all problems at once (a
    ``SettingError``). The experiment's own checks (:meth:`ActiveLearningConfig.check`) come first."""
    checks = SettingChecks()
    checks.rule(config.check, **ActiveCommand.option_flags)
    checks.source(config.dataset, "--dataset", tuple(SHARED_TEXT_CLASSIFICATION))
    if config.label_names is not None:
        if len(config.label_names) < 2:
            checks.add("--label-names", config.label_names, "a classifier needs at least two labels")
        repeated = sorted({name for name in config.label_names if config.label_names.count(name) > 1})
        if repeated:
            checks.add("--label-names", config.label_names, f"repeats {', '.join(repeated)}: name each label once")
    checks.model(config.model)
    if "bald" in config.acquisitions:
        checks.at_least("--bald-samples", config.bald_samples, 2, why=" (BALD compares MC dropout passes)")
    if push_to_hub and not checks.problems:  # the count of arms needs valid --objective, --acquisition, --num-seeds
        checks.call("--push-to-hub", push_to_hub, lambda: check_published_arm(config, push_to_hub))
    saved = Path(config.output) / "config.json"
    if saved.is_file():  # a rerun continues the experiment in --output, which must be this one
        # Read through the config class: a folder written before an option was renamed compares by what it means.
        recorded = ActiveLearningConfig.from_json(json.loads(saved.read_text())).to_json()
        refused, warned = setting_changes(recorded, config.to_json())
        if (refused or warned) and not only_adds_arms(recorded, config.to_json()):
            checks.add(
                "--output",
                config.output,
                f"holds an experiment with other settings "
                f"({'; '.join(refused + warned)}): continue it with --resume-from-checkpoint {config.output}, or choose "
                "another --output",
            )
    checks.done()


def run(config: ActiveLearningConfig, push_to_hub: str | None = None) -> list[dict]:
    """Check, run or continue every arm, then write the metrics, the table and the plots; with ``push_to_hub``
    publish the last round's model of the run's one arm."""
    check_inputs(config, push_to_hub)
    model_dir = published_model(config, push_to_hub) if push_to_hub else None
    # Imported here, not at the top: the parser above must build without torch (instant --help).
    from st_contrastive.active.loop import run_active_learning
    from st_contrastive.active.oracle import AwaitingLabels
    from st_contrastive.active.report import write_reports

    options_here = options_by_argument(sys.modules[__name__])
    try:
        rows = run_active_learning(config, say=lambda line: print(said_as_options(line, options_here)))
    except AwaitingLabels as waiting:
        print(
            f"Label the {waiting.missing} rows without a label in {waiting.path} (the label column: one of the "
            f"label names), then run: st-contrastive active --resume-from-checkpoint {config.output}"
        )
        return []
    paths = write_reports(
        config.output, rows, title=f"{config.dataset}: active learning", split="dev" if config.dev_size else "test"
    )
    tsne = write_tsne(config)
    print(Path(paths["table"]).read_text())
    print(f"Results in {config.output}: " + ", ".join(str(p) for p in [*paths.values(), tsne] if p))
    if model_dir:
        publish(model_dir, push_to_hub)
    return rows


def check_published_arm(config: ActiveLearningConfig, repo_id: str) -> None:
    """``--push-to-hub`` publishes one model: the run must have one arm."""
    check_push(repo_id)
    arms = len(config.objectives) * len(config.acquisitions) * config.num_seeds
    if arms != 1:
        raise ValueError(
            f"--push-to-hub publishes one model and this run has {arms} arms: give one --objective, "
            "one --acquisition and --num-seeds 1, or publish one arm with `st-contrastive push "
            f"{config.output}/arms/ARM/model --repo-id {repo_id}`"
        )


def published_model(config: ActiveLearningConfig, repo_id: str) -> Path:
    """The folder ``--push-to-hub`` publishes: the last round's model of the run's single arm."""
    check_published_arm(config, repo_id)
    from st_contrastive.active.loop import arm_name  # after the check: the loop imports torch

    return Path(config.output) / "arms" / arm_name(config.objectives[0], config.acquisitions[0], config.seed) / "model"


def write_tsne(config: ActiveLearningConfig):
    """t-SNE of the test embeddings of each arm's last round (seed 0, first acquisition), Fig. 4."""
    import numpy as np

    from st_contrastive.active.equal_compute import SUFFIX
    from st_contrastive.active.loop import arm_name, experiment_data
    from st_contrastive.active.report import plot_tsne
    from st_contrastive.active.settings import EQUAL_COMPUTE_OBJECTIVES

    data = experiment_data(config)
    if not data.test_texts:
        return None
    equal_compute = [o + SUFFIX for o in config.objectives if config.equal_compute and o in EQUAL_COMPUTE_OBJECTIVES]
    objectives = config.objectives + config.references + equal_compute
    panels = {}
    for objective in objectives:
        path = (
            Path(config.output)
            / "arms"
            / arm_name(objective, config.acquisitions[0], config.seed)
            / "test_embeddings.npy"
        )
        if path.exists():
            panels[f"{objective}, {config.acquisitions[0]}, last round"] = np.load(path)
    return plot_tsne(panels, data.test_labels, data.label_names, Path(config.output) / "tsne.png")


def main(argv: list[str] | None = None) -> list[dict]:
    args = build_parser().parse_args(argv)
    return run(config_from_args(args), options.config_from_args(ActiveCommand, args).push_to_hub)


if __name__ == "__main__":
    main()
