"""SCALe: active learning for text classification with dropout-view SupCon + CE, against CE only, siamese
pre-training, SetFit (at equal steps and at its defaults) and logistic regression on the frozen base, on the same
labelled sets; optionally also at equal wall time with SetFit at its defaults.

    st-contrastive active --dataset trec --objective supcon-ce ce --acquisition random entropy --seeds 3 \\
        --reference setfit setfit-defaults logreg --equal-compute --output runs/al-trec
    st-contrastive active --dataset my_texts.csv --oracle human --output runs/my-labels   # writes a file to label
    st-contrastive active --resume runs/my-labels --push-to-hub me/my-classifier         # after filling it in
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from st_contrastive.active.config import ACQUISITIONS, OBJECTIVES, REFERENCES, ActiveLearningConfig, RoundTraining
from st_contrastive.data_dir import SHARED_TEXT_CLASSIFICATION
from st_contrastive.recipes.help_format import DefaultsHelpFormatter
from st_contrastive.recipes.input_checks import SettingChecks, SettingError
from st_contrastive.recipes.push import add_push_argument, check_push, publish
from st_contrastive.recipes.run_folder import setting_changes

logger = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    defaults, training = ActiveLearningConfig(), RoundTraining()
    parser = argparse.ArgumentParser(
        prog="st-contrastive active",
        description="Active learning (SCALe): a random seed set, then rounds that train from the base model, "
        "evaluate on the test split and acquire more rows, up to a budget. Defaults are the paper's (1 %% seed "
        "set, 1 %% per round, 15 %% budget, batch 16, lr 2e-5, λ=0.9, τ=0.3, dropout views 0.0-0.4).",
        formatter_class=DefaultsHelpFormatter,
    )
    parser.add_argument("--dataset", default=defaults.dataset, help="trec or sst2 (shared SentEval files), a "
                        ".csv/.tsv/.jsonl with text, label (empty: unlabelled) and optional split, or a Hub dataset id")
    parser.add_argument("--label-names", nargs="+", default=defaults.label_names,
                        help="the label set in id order; default: the labels the data uses, sorted")
    parser.add_argument("--model", default=defaults.model, help="base model: local path or Hub id; default "
                        "all-MiniLM-L6-v2 (the paper used bert-base)")
    parser.add_argument("--objective", dest="objectives", nargs="+", default=defaults.objectives,
                        choices=OBJECTIVES, help="supcon-ce: SCALe; ce: CE only (the baseline); siamese: cosine "
                        "pre-training + logistic regression (§3.2)")
    parser.add_argument("--acquisition", dest="acquisitions", nargs="+", default=defaults.acquisitions,
                        choices=ACQUISITIONS, help="how each round picks rows to label (random, entropy: the paper's)")
    parser.add_argument("--seeds", type=int, default=None, help="runs per arm (seeds 0 … N−1); default 3, and 1 "
                        "with --oracle human (a person labels for one arm)")
    parser.add_argument("--initial", type=float, default=defaults.initial, help="random seed set, share of the pool")
    parser.add_argument("--step", type=float, default=defaults.step, help="labels added per round, share of the pool")
    parser.add_argument("--budget", type=float, default=defaults.budget, help="stop at this share of the pool")
    parser.add_argument("--pool-size", type=int, default=defaults.pool_size,
                        help="a random pool of N training rows per seed (time box); default the whole train split")
    parser.add_argument("--test-size", type=int, default=defaults.test_size, help="evaluate on N test rows only")
    parser.add_argument("--oracle", choices=["simulated", "human"], default=defaults.oracle,
                        help="simulated: gold labels; human: rows the file labels are round 0's set, the others "
                        "the pool; writes queries-round-NNN.csv and stops until --resume")
    parser.add_argument("--reference", dest="references", nargs="+", choices=REFERENCES, default=[],
                        help="also train, on the labelled sets of the first objective: setfit (SetFit at the "
                        "objectives' step count), setfit-defaults (SetFit at its own settings, 20 pair iterations), "
                        "logreg (logistic regression on the frozen base, the floor); default none")
    parser.add_argument("--equal-compute", action="store_true",
                        help="also train supcon-ce and ce, each round, for as long as setfit-defaults took on it "
                        "(needs --reference setfit-defaults)")
    parser.add_argument("--bald-samples", type=int, default=defaults.bald_samples, help="MC dropout passes of bald")
    parser.add_argument("--output", default=defaults.output, help="run folder (state, metrics, plots, models)")
    parser.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR with its own settings "
                        "(after labelling its queries file, or after a crash); other options are ignored")
    group = parser.add_argument_group("each round's training")
    group.add_argument("--epochs", type=float, default=training.epochs, help="passes over the labelled rows")
    group.add_argument("--min-steps", type=int, default=training.min_steps, help="at least this many steps a round")
    group.add_argument("--batch-size", type=int, default=training.batch_size, help="rows per batch")
    group.add_argument("--learning-rate", type=float, default=training.learning_rate, help="encoder learning rate")
    group.add_argument("--head-learning-rate", type=float, default=training.head_learning_rate,
                       help="learning rate of the softmax head")
    group.add_argument("--supcon-weight", type=float, default=training.supcon_weight, help="λ of supcon-ce")
    group.add_argument("--temperature", type=float, default=training.temperature, help="τ of supcon-ce")
    group.add_argument("--dropout-rates", type=float, nargs="+", default=training.dropout_rates,
                       help="one view per rate (supcon-ce)")
    group.add_argument("--siamese-repeats", type=int, default=training.siamese_repeats,
                       help="pairs per sentence and label relation (siamese)")
    group.add_argument("--max-seq-length", type=int, default=training.max_seq_length, help="tokens per text")
    add_push_argument(parser)  # also with --resume: publish the model of the last round once the budget is reached
    return parser


def config_from_args(args: argparse.Namespace) -> ActiveLearningConfig:
    if args.resume:
        path = Path(args.resume) / "config.json"
        if not path.exists():
            raise SettingError([f"--resume {args.resume}: no config.json there (not a run folder of this command)"])
        return ActiveLearningConfig.from_json(json.loads(path.read_text()))
    training = RoundTraining(**{name: getattr(args, name) for name in RoundTraining.__dataclass_fields__})
    values = {name: getattr(args, name) for name in ActiveLearningConfig.__dataclass_fields__
              if name not in ("training",)}
    return ActiveLearningConfig(**values, training=training)


def check_inputs(config: ActiveLearningConfig, push_to_hub: str | None = None) -> None:
    """Every setting, from the arguments alone and before anything heavy loads; all problems at once (a
    ``SettingError``). The experiment's own checks (:meth:`ActiveLearningConfig.check`) come first."""
    checks = SettingChecks()
    try:
        config.check()
    except ValueError as error:
        checks.add("", None, str(error))
    checks.source(config.dataset, "--dataset", tuple(SHARED_TEXT_CLASSIFICATION))
    if config.label_names is not None:
        if len(config.label_names) < 2:
            checks.add("--label-names", config.label_names, "a classifier needs at least two labels")
        repeated = sorted({name for name in config.label_names if config.label_names.count(name) > 1})
        if repeated:
            checks.add("--label-names", config.label_names, f"repeats {', '.join(repeated)}: name each label once")
    checks.model(config.model)
    checks.at_least("--pool-size", config.pool_size, 1)
    checks.at_least("--test-size", config.test_size, 1)
    checks.at_least("--bald-samples", config.bald_samples, 2 if "bald" in config.acquisitions else 1,
                    why=" (BALD compares MC dropout passes)" if "bald" in config.acquisitions else "")
    training = config.training
    checks.above("--epochs", training.epochs)
    checks.at_least("--min-steps", training.min_steps, 0)
    checks.at_least("--batch-size", training.batch_size, 1)
    checks.above("--learning-rate", training.learning_rate)
    checks.above("--head-learning-rate", training.head_learning_rate)
    checks.within("--supcon-weight", training.supcon_weight, 0, 1, high_included=True)
    checks.above("--temperature", training.temperature)
    for rate in training.dropout_rates:
        checks.within("--dropout-rates", rate, 0, 1, why=" (a dropout probability)")
    checks.at_least("--siamese-repeats", training.siamese_repeats, 1)
    checks.at_least("--max-seq-length", training.max_seq_length, 1)
    if push_to_hub and not checks.problems:  # the count of arms needs valid --objective, --acquisition, --seeds
        checks.call("--push-to-hub", push_to_hub, lambda: check_published_arm(config, push_to_hub))
    saved = Path(config.output) / "config.json"
    if saved.is_file():  # a rerun continues the experiment in --output, which must be this one
        refused, warned = setting_changes(json.loads(saved.read_text()), config.to_json())
        if refused or warned:
            checks.add("--output", config.output, f"holds an experiment with other settings "
                       f"({'; '.join(refused + warned)}): continue it with --resume {config.output}, or choose "
                       "another --output")
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

    try:
        rows = run_active_learning(config, say=print)
    except AwaitingLabels as waiting:
        print(f"Label the {waiting.missing} rows without a label in {waiting.path} (the label column: one of the "
              f"label names), then run: st-contrastive active --resume {config.output}")
        return []
    paths = write_reports(config.output, rows, title=f"{config.dataset}: active learning")
    tsne = write_tsne(config)
    print(Path(paths["table"]).read_text())
    print(f"Results in {config.output}: " + ", ".join(str(p) for p in [*paths.values(), tsne] if p))
    if model_dir:
        publish(model_dir, push_to_hub)
    return rows


def check_published_arm(config: ActiveLearningConfig, repo_id: str) -> None:
    """``--push-to-hub`` publishes one model: the run must have one arm."""
    check_push(repo_id)
    arms = len(config.objectives) * len(config.acquisitions) * config.seeds
    if arms != 1:
        raise ValueError(f"--push-to-hub publishes one model and this run has {arms} arms: give one --objective, "
                         "one --acquisition and --seeds 1, or publish one arm with `st-contrastive push "
                         f"{config.output}/arms/ARM/model --repo-id {repo_id}`")


def published_model(config: ActiveLearningConfig, repo_id: str) -> Path:
    """The folder ``--push-to-hub`` publishes: the last round's model of the run's single arm."""
    check_published_arm(config, repo_id)
    from st_contrastive.active.loop import arm_name  # after the check: the loop imports torch

    return Path(config.output) / "arms" / arm_name(config.objectives[0], config.acquisitions[0], 0) / "model"


def write_tsne(config: ActiveLearningConfig):
    """t-SNE of the test embeddings of each arm's last round (seed 0, first acquisition), Fig. 4."""
    import numpy as np

    from st_contrastive.active.config import EQUAL_COMPUTE_OBJECTIVES
    from st_contrastive.active.equal_compute import SUFFIX
    from st_contrastive.active.loop import arm_name
    from st_contrastive.active.report import plot_tsne
    from st_contrastive.data.text_classification import load_text_classification

    data = load_text_classification(config.dataset, config.label_names).subset_test(config.test_size, seed=0)
    if not data.test_texts:
        return None
    equal_compute = [o + SUFFIX for o in config.objectives if config.equal_compute and o in EQUAL_COMPUTE_OBJECTIVES]
    objectives = config.objectives + config.references + equal_compute
    panels = {}
    for objective in objectives:
        path = Path(config.output) / "arms" / arm_name(objective, config.acquisitions[0], 0) / "test_embeddings.npy"
        if path.exists():
            panels[f"{objective}, {config.acquisitions[0]}, last round"] = np.load(path)
    return plot_tsne(panels, data.test_labels, data.label_names, Path(config.output) / "tsne.png")


def main(argv: list[str] | None = None) -> list[dict]:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return run(config_from_args(args), args.push_to_hub)


if __name__ == "__main__":
    main()
