"""Training curves as a PNG: each logged loss term against the step."""

from __future__ import annotations

from pathlib import Path


def plot_training_curves(log_history: list[dict], path: str | Path, title: str = "") -> Path | None:
    """Plot every logged loss term (``loss`` and components such as ``contrastive``, ``mlm``) per step."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [row for row in log_history if "loss" in row and "step" in row]
    if not rows:
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
