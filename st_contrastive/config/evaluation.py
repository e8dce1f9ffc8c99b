"""The evaluation tasks by name, their shortcuts, how transfer tasks are validated (SentEval's protocol) and how
scores are summarised.

Nothing here imports torch or scikit-learn: commands check task names and list them before loading anything.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from statistics import mean

from st_contrastive.arguments import ArgumentError, at_least, one_of, seed

# STS task -> (shared file pattern, score column, display name used for evaluator names)
SHARED_STS = {
    "stsb": ("sts/stsb_{split}.tsv", "score", "sts-b"),
    "sick": ("sts/sick_{split}.tsv", "relatedness", "sick-r"),
}
SPLITS = ("train", "dev", "test")
TRANSFER_TASKS = ("mr", "cr", "subj", "mpqa", "sst2", "sst5", "trec", "mrpc")
STS_TASKS = tuple(f"{task}-{split}" for task in SHARED_STS for split in SPLITS)
SHORTCUTS = {"sts": ("stsb-test", "sick-test"), "transfer": TRANSFER_TASKS}
# SICK-R as SentEval (and the multi-view paper) report it: a regressor trained on SICK train, Pearson r on test.
SICK_RELATEDNESS = "sick-r"
VALID_TASKS = STS_TASKS + TRANSFER_TASKS + (SICK_RELATEDNESS,)
SEED = 1111  # SentEval's seed for fold shuffling
MRPC_FEATURES = ("senteval", "full")


def expand_tasks(tasks: str | Iterable[str]) -> list[str]:
    """Task names with shortcuts expanded and duplicates removed, in the order given."""
    tasks = [tasks] if isinstance(tasks, str) else list(tasks)
    unknown = [t for t in tasks if t not in VALID_TASKS and t not in SHORTCUTS]
    if unknown:
        shortcuts = ", ".join(f"{name} = {' + '.join(members)}" for name, members in SHORTCUTS.items())
        raise ValueError(
            f"Unknown task(s) {', '.join(map(repr, unknown))}. Valid tasks: {', '.join(VALID_TASKS)}; "
            f"shortcuts: {shortcuts}"
        )
    expanded = [name for task in tasks for name in SHORTCUTS.get(task, (task,))]
    return list(dict.fromkeys(expanded))


@dataclass(frozen=True)
class EvaluationSettings:
    """What a run evaluates: ``eval_tasks`` (task names or shortcuts, see :func:`expand_tasks`; empty: none),
    encoded ``eval_batch_size`` sentences at a time, on at most ``eval_max_rows`` rows of each task (None: all)."""

    eval_tasks: tuple[str, ...] | list[str] = ()
    eval_batch_size: int = 64
    eval_max_rows: int | None = None

    def __post_init__(self) -> None:
        try:
            expand_tasks(self.eval_tasks)
        except ValueError as error:
            raise ArgumentError("eval_tasks", self.eval_tasks, str(error)) from None
        at_least("eval_batch_size", self.eval_batch_size, 1)
        if self.eval_max_rows is not None:
            at_least("eval_max_rows", self.eval_max_rows, 1)


@dataclass(frozen=True)
class TransferProtocol:
    """How a transfer task is validated; the defaults are SentEval's.

    ``folds``: CV folds (outer folds for MR/CR/SUBJ/MPQA, C-selection folds for TREC/MRPC); ``inner_folds``
    (default: ``folds``) picks C inside each outer fold; ``mrpc_features``: ``"senteval"`` or ``"full"`` (see
    :func:`pair_features`); ``seed`` shuffles the folds and draws ``max_rows`` subsets.
    """

    folds: int = 10
    inner_folds: int | None = None
    mrpc_features: str = "senteval"
    seed: int = SEED

    def __post_init__(self) -> None:
        at_least("folds", self.folds, 2)
        if self.inner_folds is not None:
            at_least("inner_folds", self.inner_folds, 2)
        one_of("mrpc_features", self.mrpc_features, MRPC_FEATURES)
        seed("seed", self.seed)


SENTEVAL = TransferProtocol()


def averages(results: dict[str, dict]) -> dict[str, float]:
    """Mean STS Spearman and mean transfer accuracy over the tasks present (MRPC counts with its accuracy)."""
    groups = {
        "sts": [r["spearman"] for name, r in results.items() if name in STS_TASKS],
        "transfer": [r["accuracy"] for name, r in results.items() if name in TRANSFER_TASKS],
    }
    return {group: float(mean(scores)) for group, scores in groups.items() if scores}


def main_score(metrics: dict) -> float:
    """The headline score of one task's metrics: Spearman for STS, Pearson for SICK-R (SentEval), accuracy for
    transfer (x 100)."""
    if "pearson" in metrics:
        return metrics["pearson"]
    return metrics["spearman"] if "spearman" in metrics else metrics["accuracy"]
