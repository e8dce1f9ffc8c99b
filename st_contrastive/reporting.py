"""Results as a person reads them: tables, JSON next to the checkpoint, and curves as PNG."""

from __future__ import annotations

import json
import logging
import textwrap
from pathlib import Path
from types import ModuleType

import numpy as np

from st_contrastive.atomic_files import write_atomically
from st_contrastive.config.evaluation import averages, main_score
from st_contrastive.extras import MissingExtra, require_extra
from st_contrastive.publishing.model_card import write_model_card

logger = logging.getLogger(__name__)


def pyplot_or_none(path: str | Path) -> ModuleType | None:
    """matplotlib's pyplot, drawing off-screen; None, with a warning that ``path`` is not drawn, without the
    ``plots`` extra. A figure is a by-product of a run: its absence must not fail the run."""
    try:
        require_extra("matplotlib", "plots")
    except MissingExtra as missing:
        logger.warning("%s not drawn: %s", path, missing)
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_training_curves(log_history: list[dict], path: str | Path, title: str = "") -> Path | None:
    """Plot every logged loss term (``loss`` and components such as ``contrastive``, ``mlm``) per step."""
    rows = [row for row in log_history if "loss" in row and "step" in row]
    plt = pyplot_or_none(path) if rows else None
    if plt is None:
        return None
    terms = [key for key in rows[0] if key not in {"step", "epoch", "learning_rate", "grad_norm"}]
    fig, ax = plt.subplots(figsize=(7, 4))
    for term in terms:
        points = [(row["step"], float(row[term])) for row in rows if term in row]
        ax.plot(*zip(*points), label=term)
    ax.set_xlabel("step")
    ax.set_ylabel("training loss")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)


def eval_curves(log_history: list[dict]) -> dict[str, list[list[float]]]:
    """The STS scores an evaluator logged during training: ``{"sts-b-dev": [[step, spearman x 100], ...]}``."""
    curves: dict[str, list[list[float]]] = {}
    suffix = "_spearman_cosine"
    for row in log_history:
        for key, value in row.items():
            if key.startswith("eval_") and key.endswith(suffix):
                curves.setdefault(key[len("eval_") : -len(suffix)], []).append([row["step"], 100 * value])
    return curves


def plot_eval_curves(curves_by_run: dict[str, dict[str, list]], path: str | Path, title: str = "") -> Path | None:
    """One line per run and evaluator: the score logged during training against the step."""
    lines = [
        (f"{run} {name}".strip(), points) for run, curves in curves_by_run.items() for name, points in curves.items()
    ]
    plt = pyplot_or_none(path) if lines else None
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, points in lines:
        ax.plot(*zip(*points), marker="o", markersize=3, label=label)
    ax.set_xlabel("step")
    ax.set_ylabel("Spearman x 100")
    ax.set_title(textwrap.fill(title, 90), fontsize=9)  # a run's options can be long
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)


def write_run_results(output: str | Path, results: dict, run) -> dict:
    """Write a training run's ``results.json``, its model card (README.md) and ``training_curves.png`` into its
    checkpoint folder, and print the before/after table and where everything went. ``run`` is the :class:`~st_contrastive.training.TrainResult`.
    Scores an evaluator logged during training go into ``results["eval_curves"]`` and ``eval_curves.png``."""
    output = Path(output)
    curves = eval_curves(run.log_history)
    if curves:
        results = results | {"eval_curves": curves}
        plot_eval_curves({"": curves}, output / "eval_curves.png", title=output.name)
    path = output / "results.json"
    write_atomically(path, json.dumps(results, indent=2, default=str))
    write_model_card(output)  # the method's card replaces sentence-transformers' generic README.md
    plot_training_curves(run.log_history, output / "training_curves.png", title=output.name)
    if results.get("after"):
        print(format_comparison(results.get("before", {}), results["after"]))
    by_dimension = results.get("by_dimension", {})
    for dim, after in by_dimension.get("after", {}).items():  # --matryoshka-dims: the embeddings truncated
        print(f"\nTruncated to {dim} dimensions:\n" + format_comparison(by_dimension["before"].get(dim, {}), after))
    print(f"Saved {output} ({run.steps} steps in {run.seconds / 60:.1f} min); results in {path}")
    return results


def format_results_table(results: dict[str, dict]) -> str:
    """One row per task (score, MRPC F1, validation accuracy, chosen C, size, seconds), then the averages."""
    header = f"{'task':<11}{'metric':<10}{'score':>7}{'F1':>7}{'dev':>7}{'C':>7}{'n':>16}{'sec':>8}"
    rule = "-" * len(header)
    lines = [header, rule]
    for name, r in results.items():
        if "pearson" in r:  # SentEval's SICK-R: Pearson r, with Spearman in the F1 column's place
            lines.append(
                f"{name:<11}{'pearson':<10}{r['pearson']:>7.2f}{r['spearman']:>7.2f}{r['dev_pearson']:>7.2f}"
                f"{'':>7}{r['n']:>16}{r['seconds']:>8.1f}"
            )
            continue
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


def write_results_json(results: dict[str, dict], path: str | Path, **metadata) -> Path:
    """Write ``{"results": ..., "averages": ..., **metadata}`` (e.g. model, tasks, settings) to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"results": results, "averages": averages(results), **metadata}
    write_atomically(path, json.dumps(payload, indent=2) + "\n")
    return path


def printed_change(old: float, new: float) -> float:
    """The change of two scores as printed (rounded to 2 decimals), so that a table adds up as a reader checks it."""
    return round(round(new, 2) - round(old, 2), 2)


def format_comparison(before: dict[str, dict], after: dict[str, dict]) -> str:
    """Before/after table of the main score of each task (x 100), with the averages and the change."""
    header = f"{'task':<14}{'before':>9}{'after':>9}{'change':>9}"
    lines = [header, "-" * len(header)]
    rows = [(name, main_score(before[name]) if name in before else None, main_score(r)) for name, r in after.items()]
    rows += [(f"{group} avg", averages(before).get(group), value) for group, value in averages(after).items()]
    for name, old, new in rows:
        old_text = f"{old:>9.2f}" if old is not None else f"{'':>9}"
        change = f"{printed_change(old, new):>+9.2f}" if old is not None else ""
        lines.append(f"{name:<14}{old_text}{new:>9.2f}{change}")
    return "\n".join(lines)


def verdict(before: dict[str, dict], after: dict[str, dict], advice: str) -> dict:
    """Whether a trained model is below its base on every task both were scored on, the change of each (x 100), and
    ``advice`` (what to try) when it is."""
    changes = {
        name: printed_change(main_score(before[name]), main_score(after[name])) for name in after if name in before
    }
    worse = bool(changes) and all(change < 0 for change in changes.values())
    return {"below_base_on_every_task": worse, "changes": changes, "advice": advice if worse else None}


def verdict_line(found: dict) -> str | None:
    """The line that ends a run whose model is worse than its base on every task (:func:`verdict`); None otherwise."""
    if not found["below_base_on_every_task"]:
        return None
    changes = ", ".join(f"{name} {change:+.2f}" for name, change in found["changes"].items())
    return f"Worse than the base on every task scored ({changes}). {found['advice']}"
