"""DeCLUTR's objective ablation (paper Fig. 3): base vs MLM-only vs contrastive-only vs both, at equal steps.

    st-contrastive declutr-ablation --model runs/mlm-small --max-steps 300 [any declutr option ...]

Every variant starts from the same base with the same seed, data and step budget; options not listed here are
`st-contrastive declutr` options and apply to every variant. Writes <output>/ablation.json, a table and ablation.png.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from st_contrastive.recipes.declutr import DeCLUTRConfig, build_parser, train_declutr

VARIANTS = {
    "mlm-only": {"contrastive_weight": 0.0},
    "contrastive-only": {"mlm_weight": 0.0},
    "declutr": {},
}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="st-contrastive declutr-ablation", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="the MLM-pretrained base every variant starts from")
    parser.add_argument("--output", default="runs/declutr-ablation", help="folder for the variants and the table")
    parser.add_argument("--eval-tasks", nargs="*", default=["stsb-test", "sick-test"], help="tasks to compare")
    args, declutr_options = parser.parse_known_args(argv)
    base = DeCLUTRConfig.from_args(build_parser().parse_args(declutr_options))
    # Imported here, not at the top: the parsers must build without torch (instant --help).
    from sentence_transformers import SentenceTransformer

    from st_contrastive.evaluation import averages, evaluate_model, main_score

    base = replace(base, model=args.model, eval_tasks=args.eval_tasks)
    output = Path(args.output)
    output.mkdir(parents=True, exist_ok=True)

    scores = {"base (mean pooling)": evaluate_model(SentenceTransformer(args.model), args.eval_tasks)}
    for name, changes in VARIANTS.items():
        scores[name] = train_declutr(replace(base, output=str(output / name), **changes))["after"]

    table = {name: {task: main_score(r) for task, r in result.items()}
             | {"avg": averages(result).get("sts", averages(result).get("transfer"))} for name, result in scores.items()}
    (output / "ablation.json").write_text(json.dumps({"model": args.model, "declutr_options": declutr_options,
                                                      "scores": table}, indent=2))
    plot(table, output / "ablation.png")
    columns = [*args.eval_tasks, "avg"]
    print(f"{'variant':<22}" + "".join(f"{c:>12}" for c in columns))
    for name, row in table.items():
        print(f"{name:<22}" + "".join(f"{row[c]:>12.2f}" for c in columns))
    return table


def plot(table: dict[str, dict[str, float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = [t for t in next(iter(table.values())) if t != "avg"]
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.8 / len(table)
    for i, (name, row) in enumerate(table.items()):
        ax.bar([t + i * width for t in range(len(tasks))], [row[t] for t in tasks], width, label=name)
    ax.set_xticks([t + width * (len(table) - 1) / 2 for t in range(len(tasks))], tasks)
    ax.set_ylabel("Spearman x 100")
    ax.set_title("DeCLUTR objective ablation (equal steps)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
