"""Evaluation tasks by name, and ``evaluate_model``, which runs any mix of them on one model.

Task names: ``stsb-{train,dev,test}``, ``sick-{train,dev,test}``, ``mr``, ``cr``, ``subj``, ``mpqa``, ``sst2``,
``sst5``, ``trec``, ``mrpc``; shortcuts ``sts`` (= stsb-test, sick-test) and ``transfer`` (the 8 transfer tasks).
Scores are x 100: cosine Spearman for STS, test accuracy for transfer (MRPC also F1).
"""

from __future__ import annotations

import time
from collections.abc import Iterable

import numpy as np
from tqdm.auto import tqdm

from st_contrastive.evaluation.embedding_cache import EmbeddingCache
from st_contrastive.evaluation.sts import SHARED_STS, SPLITS, load_sts, sts_spearman
from st_contrastive.evaluation.transfer import SENTEVAL, TRANSFER_TASKS, TransferProtocol, evaluate_transfer

STS_TASKS = tuple(f"{task}-{split}" for task in SHARED_STS for split in SPLITS)
SHORTCUTS = {"sts": ("stsb-test", "sick-test"), "transfer": TRANSFER_TASKS}
VALID_TASKS = STS_TASKS + TRANSFER_TASKS


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


def evaluate_model(
    model,
    tasks: str | Iterable[str] = ("sts", "transfer"),
    batch_size: int = 32,
    max_rows: int | None = None,
    protocol: TransferProtocol = SENTEVAL,
    show_progress: bool = True,
) -> dict[str, dict]:
    """``{task: metrics}`` for each task; STS metrics hold ``spearman``, transfer metrics ``accuracy`` (x 100).

    Every metrics dict also has ``seconds``. Sentences shared between tasks are encoded once. ``max_rows`` limits
    each task (first STS pairs, a seeded random subset of each transfer split) for quick checks only;
    ``protocol`` sets the transfer tasks' validation (SentEval's by default).
    """
    names = expand_tasks(tasks)
    cache = EmbeddingCache(model, batch_size=batch_size)
    results = {}
    progress = tqdm(names, desc="Evaluating", unit="task", disable=not show_progress)
    for name in progress:
        progress.set_postfix_str(name)
        start = time.perf_counter()
        if name in STS_TASKS:
            task, split = name.split("-")
            sentences1, sentences2, gold = load_sts(task, split, max_rows=max_rows)
            result = {"spearman": sts_spearman(model, sentences1, sentences2, gold, cache=cache), "n": len(gold)}
        else:
            result = evaluate_transfer(model, name, protocol, max_rows=max_rows, cache=cache)
        result["seconds"] = round(time.perf_counter() - start, 2)
        results[name] = result
    return results


def averages(results: dict[str, dict]) -> dict[str, float]:
    """Mean STS Spearman and mean transfer accuracy over the tasks present (MRPC counts with its accuracy)."""
    groups = {
        "sts": [r["spearman"] for name, r in results.items() if name in STS_TASKS],
        "transfer": [r["accuracy"] for name, r in results.items() if name in TRANSFER_TASKS],
    }
    return {group: float(np.mean(scores)) for group, scores in groups.items() if scores}


def main_score(metrics: dict) -> float:
    """The headline score of one task's metrics: Spearman for STS, accuracy for transfer (x 100)."""
    return metrics["spearman"] if "spearman" in metrics else metrics["accuracy"]
