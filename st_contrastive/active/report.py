"""An active-learning experiment as a person reads it: per-round CSV/JSON, a mean ± std table over seeds, the
learning curves and a t-SNE of the test embeddings (the paper's Fig. 4) as PNG."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from st_contrastive.atomic_files import write_atomically
from st_contrastive.data.table_file import write_csv_atomically
from st_contrastive.reporting import pyplot_or_none


def summarize(rows: list[dict]) -> list[dict]:
    """Mean and std over seeds of accuracy and timings, per objective × acquisition × round."""
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault((row["objective"], row["acquisition"], row["round"]), []).append(row)
    summary = []
    for (objective, acquisition, round_number), members in groups.items():
        entry = {
            "objective": objective,
            "acquisition": acquisition,
            "round": round_number,
            "labelled": members[0]["labelled"],
            "percent": members[0]["percent"],
            "seeds": len(members),
        }
        for key in ("accuracy", "f1_macro", "train_seconds", "acquire_seconds", "steps", "epochs", "budget_seconds"):
            values = [m[key] for m in members if key in m]
            if values:
                entry[f"{key}_mean"] = round(float(np.mean(values)), 2)
                entry[f"{key}_std"] = round(float(np.std(values)), 2)
        summary.append(entry)
    return summary


ARMS = {  # what a reader of the table needs to know about each arm that is not an --objective
    "setfit": "SetFit at the objectives' step count, on the first objective's labelled sets",
    "setfit-defaults": "SetFit at its own settings (20 pair iterations, 1 epoch), on the same labelled sets",
    "logreg": "logistic regression on the frozen base, on the same labelled sets: the floor",
    "supcon-ce-equal-compute": "supcon-ce trained each round as long as setfit-defaults took (own acquisitions)",
    "ce-equal-compute": "ce trained each round as long as setfit-defaults took (own acquisitions)",
}


def format_table(summary: list[dict]) -> str:
    """A markdown table: one row per objective × acquisition, one column per round (accuracy mean ± std), and the
    arm's training wall time per round (mean over rounds and seeds)."""
    percents = sorted({s["percent"] for s in summary})
    arms = list(dict.fromkeys((s["objective"], s["acquisition"]) for s in summary))
    cells = {(s["objective"], s["acquisition"], s["percent"]): s for s in summary}
    header = "| objective | acquisition | " + " | ".join(f"{p:g} %" for p in percents) + " | training s / round |"
    lines = [header, "|" + "---|" * (len(percents) + 3)]
    for objective, acquisition in arms:
        values = []
        for percent in percents:
            s = cells.get((objective, acquisition, percent))
            values.append(f"{s['accuracy_mean']:.2f} ± {s['accuracy_std']:.2f}" if s and "accuracy_mean" in s else "")
        seconds = [
            s["train_seconds_mean"]
            for s in summary
            if (s["objective"], s["acquisition"]) == (objective, acquisition) and "train_seconds_mean" in s
        ]
        values.append(f"{np.mean(seconds):.1f}" if seconds else "")
        lines.append(f"| {objective} | {acquisition} | " + " | ".join(values) + " |")
    legend = [f"- {name}: {ARMS[name]}" for name in dict.fromkeys(o for o, _ in arms) if name in ARMS]
    return "\n".join(lines + ([""] + legend if legend else []))


def below_floor(summary: list[dict]) -> list[str]:
    """Arm, acquisition and round where the mean accuracy is below logistic regression on the frozen base's
    (``logreg``, on the same labelled-set sizes of the same acquisition)."""
    floor = {
        (s["acquisition"], s["round"]): s["accuracy_mean"]
        for s in summary
        if s["objective"] == "logreg" and "accuracy_mean" in s
    }
    return [
        f"{s['objective']}, {s['acquisition']}, {s['percent']:g} %: {s['accuracy_mean']:.2f} < "
        f"{floor[(s['acquisition'], s['round'])]:.2f}"
        for s in summary
        if s["objective"] != "logreg"
        and (s["acquisition"], s["round"]) in floor
        and "accuracy_mean" in s
        and s["accuracy_mean"] < floor[(s["acquisition"], s["round"])]
    ]


def format_timing(rows: list[dict]) -> str:
    """Wall time per round, the share of it spent scoring the pool (acquisition) rather than training, the training
    time of all rounds (mean over seeds) and the optimisation steps per round."""
    columns = (
        "objective",
        "acquisition",
        "s / round",
        "training s",
        "acquisition s",
        "acquisition share",
        "training s, all rounds",
        "steps / round",
    )
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    arms = list(dict.fromkeys((r["objective"], r["acquisition"]) for r in rows))
    for objective, acquisition in arms:
        members = [r for r in rows if (r["objective"], r["acquisition"]) == (objective, acquisition)]
        train = float(np.mean([r.get("train_seconds", 0.0) for r in members]))
        scoring = float(np.mean([r.get("acquire_seconds", 0.0) for r in members]))
        evaluation = float(np.mean([r.get("eval_seconds", 0.0) for r in members]))
        total = train + scoring + evaluation
        seeds = {r["seed"] for r in members} or {0}
        all_rounds = sum(r.get("train_seconds", 0.0) for r in members) / len(seeds)
        steps = [r["steps"] for r in members if "steps" in r]
        lines.append(
            f"| {objective} | {acquisition} | {total:.1f} | {train:.1f} | {scoring:.1f} | "
            f"{100 * scoring / total if total else 0:.0f} % | {all_rounds:.1f} | "
            f"{f'{np.mean(steps):.0f}' if steps else ''} |"
        )
    return "\n".join(lines)


def plot_learning_curves(summary: list[dict], path: str | Path, title: str = "", split: str = "test") -> Path | None:
    """Accuracy on ``split`` against % labelled, one line per objective × acquisition, with a ± std band over
    seeds."""
    arms = list(dict.fromkeys((s["objective"], s["acquisition"]) for s in summary if "accuracy_mean" in s))
    plt = pyplot_or_none(path) if arms else None
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for objective, acquisition in arms:
        points = sorted(
            (s["percent"], s["accuracy_mean"], s["accuracy_std"])
            for s in summary
            if (s["objective"], s["acquisition"]) == (objective, acquisition) and "accuracy_mean" in s
        )
        x, mean, std = (np.array(v) for v in zip(*points))
        (line,) = ax.plot(x, mean, marker="o", label=f"{objective}, {acquisition}")
        ax.fill_between(x, mean - std, mean + std, color=line.get_color(), alpha=0.15)
    ax.set_xlabel("% of the pool labelled")
    ax.set_ylabel(f"{split} accuracy (%)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)


def plot_tsne(
    panels: dict[str, np.ndarray], labels: list[int], label_names: list[str], path: str | Path, seed: int = 0
) -> Path | None:
    """scikit-learn's t-SNE of each panel's test embeddings, coloured by gold label."""
    from sklearn.manifold import TSNE

    plt = pyplot_or_none(path) if panels else None
    if plt is None:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(4.5 * len(panels), 4.5), squeeze=False)
    labels = np.asarray(labels)
    for ax, (name, embeddings) in zip(axes[0], panels.items()):
        points = TSNE(
            n_components=2, init="pca", random_state=seed, perplexity=min(30.0, (len(embeddings) - 1) / 3)
        ).fit_transform(embeddings)
        for label, label_name in enumerate(label_names):
            mask = labels == label
            ax.scatter(points[mask, 0], points[mask, 1], s=6, label=label_name)
        ax.set_title(name, fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    axes[0][0].legend(fontsize=7, markerscale=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)


def write_reports(output: str | Path, rows: list[dict], title: str = "", split: str = "test") -> dict[str, Path]:
    """``metrics.csv``/``.json`` (every round of every arm), ``summary.json``, ``results.md`` and
    ``learning_curve.png`` in ``output``; returns their paths. ``split`` names what the accuracies were read on
    (``dev`` for a run with ``--dev-size``)."""
    output = Path(output)
    paths = {
        "metrics_csv": output / "metrics.csv",
        "metrics_json": output / "metrics.json",
        "summary_json": output / "summary.json",
        "table": output / "results.md",
    }
    columns = list(dict.fromkeys(key for row in rows for key in row))
    write_csv_atomically(paths["metrics_csv"], tuple(columns), rows)
    write_atomically(paths["metrics_json"], json.dumps(rows, indent=1))
    summary = summarize(rows)
    write_atomically(paths["summary_json"], json.dumps(summary, indent=1))
    below = below_floor(summary)
    floor = (
        f"\nBelow the floor (logreg's mean accuracy at the same round): {'; '.join(below) or 'none'}\n"
        if any(r["objective"] == "logreg" for r in rows)
        else ""
    )
    write_atomically(
        paths["table"],
        f"# {title}\n\n{split.capitalize()} accuracy (%), mean ± std over seeds\n\n"
        f"{format_table(summary)}\n"
        f"{floor}\nWall time per round (mean over rounds and seeds)\n\n{format_timing(rows)}\n",
    )
    curve = plot_learning_curves(summary, output / "learning_curve.png", title, split)
    if curve:
        paths["learning_curve"] = curve
    return paths
