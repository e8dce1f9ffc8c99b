"""Run any mix of STS and transfer tasks on one model, print a results table, write it as JSON.

Task names: ``stsb-{train,dev,test}``, ``sick-{train,dev,test}``, ``mr``, ``cr``, ``subj``, ``mpqa``, ``sst2``,
``sst5``, ``trec``, ``mrpc``; shortcuts ``sts`` (= stsb-test, sick-test) and ``transfer`` (the 8 transfer tasks).
Scores are x 100: cosine Spearman for STS, test accuracy for transfer (MRPC also F1).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from st_contrastive.evaluation.embedding_cache import EmbeddingCache
from st_contrastive.evaluation.sts import SHARED_STS, SPLITS, load_sts, sts_spearman
from st_contrastive.evaluation.transfer import SEED, TRANSFER_TASKS, evaluate_transfer

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
    folds: int = 10,
    inner_folds: int | None = None,
    max_rows: int | None = None,
    mrpc_features: str = "senteval",
    seed: int = SEED,
    show_progress: bool = True,
) -> dict[str, dict]:
    """``{task: metrics}`` for each task; STS metrics hold ``spearman``, transfer metrics ``accuracy`` (x 100).

    Every metrics dict also has ``seconds``. Sentences shared between tasks are encoded once. ``max_rows`` limits
    each task (first STS pairs, a seeded random subset of each transfer split) for quick checks only.
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
            result = evaluate_transfer(
                model,
                name,
                folds=folds,
                inner_folds=inner_folds,
                max_rows=max_rows,
                mrpc_features=mrpc_features,
                seed=seed,
                cache=cache,
            )
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


def format_results_table(results: dict[str, dict]) -> str:
    """One row per task (score, MRPC F1, validation accuracy, chosen C, size, seconds), then the averages."""
    header = f"{'task':<11}{'metric':<10}{'score':>7}{'F1':>7}{'dev':>7}{'C':>7}{'n':>16}{'sec':>8}"
    rule = "-" * len(header)
    lines = [header, rule]
    for name, r in results.items():
        if "spearman" in r:
            lines.append(f"{name:<11}{'spearman':<10}{r['spearman']:>7.2f}{'':>21}{r['n']:>16}{r['seconds']:>8.1f}")
            continue
        f1 = f"{r['f1']:.2f}" if "f1" in r else ""
        C = np.median(r["C"]) if isinstance(r["C"], list) else r["C"]  # nested CV picks C per fold: show the median
        size = str(r["n"]) if "n" in r else "/".join(str(r[k]) for k in ("n_train", "n_dev", "n_test") if k in r)
        lines.append(
            f"{name:<11}{'accuracy':<10}{r['accuracy']:>7.2f}{f1:>7}{r['dev_accuracy']:>7.2f}{C:>7.3g}{size:>16}"
            f"{r['seconds']:>8.1f}"
        )
    lines.append(rule)
    for group, value in averages(results).items():
        lines.append(f"{group + ' avg':<21}{value:>7.2f}")
    return "\n".join(lines)


def print_results_table(results: dict[str, dict]) -> None:
    print(format_results_table(results))


def write_results_json(results: dict[str, dict], path: str | Path, **metadata) -> Path:
    """Write ``{"results": ..., "averages": ..., **metadata}`` (e.g. model, tasks, settings) to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"results": results, "averages": averages(results), **metadata}
    path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return path


def format_comparison(before: dict[str, dict], after: dict[str, dict]) -> str:
    """Before/after table of the main score of each task (x 100), with the averages and the change."""
    header = f"{'task':<14}{'before':>9}{'after':>9}{'change':>9}"
    lines = [header, "-" * len(header)]
    rows = [(name, main_score(before[name]) if name in before else None, main_score(r)) for name, r in after.items()]
    rows += [(f"{group} avg", averages(before).get(group), value) for group, value in averages(after).items()]
    for name, old, new in rows:
        old_text = f"{old:>9.2f}" if old is not None else f"{'':>9}"
        change = f"{new - old:>+9.2f}" if old is not None else ""
        lines.append(f"{name:<14}{old_text}{new:>9.2f}{change}")
    return "\n".join(lines)
