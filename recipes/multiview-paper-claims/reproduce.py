"""The tables of the multi-view report (README.md beside this file), from the runs kept in results.json.

The report asks whether this implementation reproduces the multi-view paper's claims, and at which settings.

results.json beside this file keeps what the tables read, one entry a run (scores × 100, seconds, the last logged
loss), named EXPERIMENT/RUN:
- ``trained-embeddings/<arm>-seed<S>``: word embeddings trained with the views, 150 steps (the command's defaults),
  run with the package as it was at 9a4c761 (its option spellings), checked out into a temporary git worktree;
- ``frozen-vectors/<arm>-seed<S>``: frozen spaCy vectors (``--word-vectors spacy:en_core_web_md``, a 50K
  vocabulary), 200 steps, today's command;
- ``every-word/<arm>-seed1``: the same with every word of the vectors' table (``--vocab-size 700000``);
- ``steps/<arm>``: frozen vectors over 400 steps with STS-B dev every 100 (seed 1).
An arm ``random-...`` is the same command with ``--max-steps 0``: the untrained encoders, the paper's control. A run
missing from results.json is trained under --runs (or read back from there) and added.

    .venv/bin/python recipes/multiview-paper-claims/reproduce.py \
        {claims,trained-embeddings,frozen-vectors,every-word,steps} [--runs runs]

Prints the table as the report shows it (a second from results.json; each run 4 to 12 minutes on 2 cores).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # recipes/: the command line its scripts share
import results_script

TRANSFER = ["mr", "cr", "subj", "mpqa", "trec", "mrpc"]
COLUMNS = {
    **{task: task.upper() for task in TRANSFER},
    "transfer": "transfer avg",
    "sick-r": "SICK-R r",
    "sick-cos": "SICK cos ρ",
}
ARMS = {"seq-seq": "SEQ, SEQ (QuickThought)", "dep-seq": "DEP, SEQ", "dep-const": "DEP, CONST"}
EVALUATION = ["--eval-max-rows", "2000", "--eval-folds", "5"]

# The trained-embeddings runs: the code of "README: multi-view section (...), books comparison with controls", where
# this table first appeared.
BEFORE = "9a4c761"
BEFORE_OPTIONS = ["--max-documents", "300", "--word-dim", "128", "--dim", "256", "--max-steps", "150", *EVALUATION]
# arm -> (the table's row, the options after BEFORE_OPTIONS, seeds)
TRAINED_EMBEDDINGS = {
    "seq-seq": ("SEQ, SEQ (QuickThought)", [], (1, 2)),
    "dep-seq": ("DEP, SEQ", [], (1, 2)),
    "dep-const": ("DEP, CONST", [], (1, 2)),
    "random-seq-seq": ("random SEQ, SEQ", ["--max-steps", "0"], (1, 2)),
    "random-dep-const": ("random DEP, CONST", ["--max-steps", "0"], (1, 2)),
    "lr5e-3-seq-seq": ("SEQ, SEQ at lr 5e-3 (seed 1)", ["--learning-rate", "5e-3"], (1,)),
    "lr5e-3-dep-seq": ("DEP, SEQ at lr 5e-3 (seed 1)", ["--learning-rate", "5e-3"], (1,)),
}
BOLD = ("transfer", "sick-r")  # in bold where highest

FROZEN = ["multiview", "--word-vectors", "spacy:en_core_web_md", "--max-steps", "200", "--eval-steps", "50"]
FROZEN += EVALUATION
# experiment -> (--vocab-size, seeds, run folder under --runs)
VOCABULARY = {"frozen-vectors": ("50000", (1, 2, 3), "mv-wv"), "every-word": ("700000", (1,), "mv-wv-allwords")}
FROZEN_ARMS = [f"{prefix}{arm}" for prefix in ("", "random-") for arm in ARMS]  # the arms, then their controls

STEPS = ["multiview", "--word-vectors", "spacy:en_core_web_md", "--max-steps", "400", "--eval-steps", "100"]
STEPS += ["--eval-tasks", "sick-r", *EVALUATION, "--seed", "1"]
STEPS_ARMS = {"dep-seq": "DEP, SEQ", "seq-seq": "SEQ, SEQ"}


def views(arm: str) -> str:
    """``random-dep-seq-seed1`` -> ``dep,seq``."""
    return ",".join(arm.rsplit("-seed", 1)[0].removeprefix("random-").removeprefix("lr5e-3-").split("-"))


def scores(after: dict, sick_r: dict) -> dict:
    """The transfer accuracies and their mean, SICK-R (SentEval's regressor, Pearson) and SICK's cosine Spearman."""
    found = {task: after[task]["accuracy"] for task in TRANSFER}
    found["transfer"] = statistics.mean(found.values())
    return found | {"sick-r": sick_r["pearson"], "sick-cos": after["sick-test"]["spearman"]}


def trained_embeddings_run(run: str, runs: Path) -> dict:
    """Trained and scored with the package at BEFORE; SICK-R in full with that version's ``evaluate``."""
    _, options, _ = TRAINED_EMBEDDINGS[run.rsplit("-seed", 1)[0]]
    output = (runs / "mv-before" / run).resolve()
    full = output / "evaluation_results.json"
    if not full.exists():
        with results_script.worktree(BEFORE) as code:
            cli, environment = [sys.executable, "-m", "st_contrastive.commands.cli"], results_script.environment(code)
            if not (output / "results.json").exists():
                command = [*cli, "multiview", "--views", views(run), *BEFORE_OPTIONS, *options]
                command += ["--seed", run.rsplit("-seed", 1)[1], "--output", str(output)]
                command += ["--parse-cache", str((runs / "mv-before" / "parsed").resolve())]
                subprocess.run(command, cwd=code, env=environment, check=True)
            command = [*cli, "evaluate", str(output), "--tasks", "sick-r", "--trust-remote-code"]
            subprocess.run(command, cwd=code, env=environment, check=True)
    results = json.loads((output / "results.json").read_text())
    return scores(results["after"], json.loads(full.read_text())["results"]["sick-r"]) | {
        "train_seconds": results["train"]["seconds"]
    }


def frozen_vectors_run(experiment: str, run: str, runs: Path) -> dict:
    """One run of today's command with frozen vectors; wall seconds are training, loading and evaluation."""
    from st_contrastive.commands.cli import main as cli_main

    vocab_size, _, folder = VOCABULARY[experiment]
    output = runs / folder / run
    wall = output / "wall_seconds.txt"
    if not (output / "results.json").exists():
        start = time.perf_counter()
        command = [*FROZEN, "--views", views(run), "--vocab-size", vocab_size, "--seed", run.rsplit("-seed", 1)[1]]
        cli_main([*command, "--output", str(output), "--overwrite", *(["--max-steps", "0"] * run.startswith("random"))])
        wall.write_text(f"{time.perf_counter() - start:.1f}\n")
    results = json.loads((output / "results.json").read_text())
    return scores(results["after"], results["after"]["sick-r"]) | {
        "train_seconds": results.get("train", {}).get("seconds", 0.0),
        "wall_seconds": float(wall.read_text()) if wall.exists() else None,
        "loss": results.get("train", {}).get("last_log", {}).get("loss"),
    }


def steps_run(run: str, runs: Path) -> dict:
    output = runs / "mv-wv" / f"curve-{run}"
    if not (output / "results.json").exists():
        from st_contrastive.commands.cli import main as cli_main

        control = ["--max-steps", "0"] * run.startswith("random")
        cli_main([*STEPS, "--views", views(run), "--output", str(output), "--overwrite", *control])
    results = json.loads((output / "results.json").read_text())
    return {
        "dev_curve": [point for point in results.get("eval_curves", {}).get("sts-b-dev", []) if point[0] > 0],
        "loss": results.get("train", {}).get("last_log", {}).get("loss"),
        "sick_r": [results["after"]["sick-r"]["pearson"], results["after"]["sick-r"]["spearman"]],
        "train_seconds": results.get("train", {}).get("seconds", 0.0),
    }


def measure(name: str, runs: Path) -> dict:
    experiment, run = name.split("/")
    if experiment == "trained-embeddings":
        return trained_embeddings_run(run, runs)
    if experiment == "steps":
        return steps_run(run, runs)
    return frozen_vectors_run(experiment, run, runs)


def kept(names: list[str], runs: Path) -> dict[str, dict]:
    return results_script.kept(__file__, names, lambda name: measure(name, runs))


def arms_of(experiment: str, runs: Path) -> dict[str, list[dict]]:
    """Each arm's runs, one dict a seed, by arm (seq-seq, random-dep-const)."""
    if experiment == "trained-embeddings":
        names = {arm: [f"{arm}-seed{seed}" for seed in seeds] for arm, (*_, seeds) in TRAINED_EMBEDDINGS.items()}
    else:
        names = {arm: [f"{arm}-seed{seed}" for seed in VOCABULARY[experiment][1]] for arm in FROZEN_ARMS}
    found = kept([f"{experiment}/{name}" for seeds in names.values() for name in seeds], runs)
    return {arm: [found[f"{experiment}/{name}"] for name in seeds] for arm, seeds in names.items()}


def header(*columns: str) -> list[str]:
    return ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]


def trained_embeddings_table(runs: Path) -> str:
    rows = arms_of("trained-embeddings", runs)
    best = {column: max(statistics.mean(r[column] for r in found) for found in rows.values()) for column in BOLD}
    lines = header("arm", *COLUMNS.values(), "train s")
    for arm, found in rows.items():
        cells = []
        for column in COLUMNS:
            text = results_script.mean_std([r[column] for r in found])
            highest = column in BOLD and statistics.mean(r[column] for r in found) == best[column]
            cells.append(f"**{text}**" if highest else text)
        train = statistics.mean(r["train_seconds"] for r in found)
        lines.append(f"| {TRAINED_EMBEDDINGS[arm][0]} | " + " | ".join(cells) + f" | {train:.0f} |")
    return "\n".join(lines)


def frozen_vectors_table(experiment: str, runs: Path) -> str:
    mean_std = results_script.mean_std
    lines = header("arm", *COLUMNS.values(), "loss", "train s", "wall s")
    for arm, found in arms_of(experiment, runs).items():
        trained = not arm.startswith("random-")
        name = ARMS[arm] if trained else f"random {ARMS[arm.removeprefix('random-')].split(' (')[0]}"
        loss = mean_std([r["loss"] for r in found], digits=2) if trained else ""
        lines.append(
            f"| {name} | "
            + " | ".join(mean_std([r[column] for r in found]) for column in COLUMNS)
            + f" | {loss} | {statistics.mean(r['train_seconds'] for r in found):.0f}"
            + f" | {statistics.mean(r['wall_seconds'] or 0 for r in found):.0f} |"
        )
    return "\n".join(lines)


def steps_table(runs: Path) -> str:
    arms = [f"{prefix}{arm}" for prefix in ("", "random-") for arm in STEPS_ARMS]  # the arms, then their controls
    found = kept([f"steps/{arm}" for arm in arms], runs)
    lines = header("arm", "STS-B dev at 100 / 200 / 300 / 400 steps", "loss at 400", "SICK-R r", "SICK-R ρ", "train s")
    for arm in arms:
        row, control = found[f"steps/{arm}"], arm.startswith("random-")
        label = f"random {STEPS_ARMS[arm.removeprefix('random-')]}" if control else STEPS_ARMS[arm]
        curve = " / ".join(f"{score:.1f}" for _, score in row["dev_curve"])
        loss = f"{row['loss']:.2f}" if row["loss"] is not None and not control else ""
        lines.append(
            f"| {label} | {curve} | {loss} | "
            + " | ".join(f"{score:.1f}" for score in row["sick_r"])
            + f" | {row['train_seconds']:.0f} |"
        )
    return "\n".join(lines)


# The claims, each comparison the difference of two arms' means (× 100, shown to one decimal): it holds where that
# shown difference is above zero, and it is beyond 2 std where it is above twice the larger std (over seeds) of its
# two arms.
SHORT = {"seq-seq": "SEQ+SEQ", "dep-seq": "DEP+SEQ", "dep-const": "DEP+CONST"}
MEASURES = {"transfer": "transfer avg", "sick-r": "SICK-R r", "sick-cos": "SICK cos ρ"}
MULTI_VIEW = [("dep-seq", "seq-seq"), ("dep-const", "seq-seq")]
CONST_BEST = [("dep-const", "dep-seq"), ("dep-const", "seq-seq")]
AGAINST_RANDOM = [(arm, f"random-{arm}") for arm in SHORT]
# (the claim, where the paper makes it) -> its rows: (measure, what its comparisons are, the comparisons)
CLAIMS = {
    "multi-view beats single view (Table 2)": [
        ("transfer", "DEP+SEQ / DEP+CONST over SEQ+SEQ", MULTI_VIEW),
        ("sick-r", "the same", MULTI_VIEW),
    ],
    "DEP+CONST is best (Table 2: 86.0, 85.3, 84.9)": [
        ("transfer", "DEP+CONST over DEP+SEQ / SEQ+SEQ", CONST_BEST),
        ("sick-r", "the same", CONST_BEST),
    ],
    "trained beats random on transfer (Table 3)": [
        ("transfer", "SEQ+SEQ / DEP+SEQ / DEP+CONST over untrained", AGAINST_RANDOM)
    ],
    "trained beats random on SICK-R (Table 3)": [
        ("sick-r", "SEQ+SEQ / DEP+SEQ / DEP+CONST over untrained", AGAINST_RANDOM),
        ("sick-cos", "the same", AGAINST_RANDOM),
    ],
}


def difference(arms: dict[str, list[dict]], measure: str, pair: tuple[str, str]) -> tuple[float, bool] | None:
    """The shown difference of the pair's means and whether it is beyond 2 std; None where an arm was not run."""
    if not all(arm in arms for arm in pair):
        return None
    values = [[run[measure] for run in arms[arm]] for arm in pair]
    shown = round(statistics.mean(values[0]) - statistics.mean(values[1]), 1)
    return shown, shown > 2 * max(statistics.stdev(v) for v in values)


def verdict(found: list[tuple[float, bool] | None], names: list[str]) -> str:
    """yes, no, or which comparisons hold; then how many of those that hold are beyond 2 std."""
    held = [(name, result[1]) for name, result in zip(names, found) if result and result[0] > 0]
    compared = sum(result is not None for result in found)
    if not held:
        return "no"
    text = "yes" if len(held) == compared else "only " + ", ".join(name for name, _ in held)
    return f"{text} ({sum(beyond for _, beyond in held)} of {len(held)} beyond 2 std)"


def claims_table(runs: Path) -> str:
    measured = (arms_of("trained-embeddings", runs), arms_of("frozen-vectors", runs))
    lines = header("claim (the paper)", "measure: comparisons", "before", "held?", "after", "holds now?")
    for claim, rows in CLAIMS.items():
        for measure, comparisons, pairs in rows:
            names = [
                SHORT[pair[0]] if pair[1].startswith("random") else f"{SHORT[pair[0]]} over {SHORT[pair[1]]}"
                for pair in pairs
            ]
            cells = []
            for arms in measured:
                found = [difference(arms, measure, pair) for pair in pairs]
                shown = ("–" if result is None else f"{result[0]:+.1f}" if result[0] else "0.0" for result in found)
                cells += [" / ".join(shown), verdict(found, names)]
            lines.append(f"| {claim} | {MEASURES[measure]}: {comparisons} | " + " | ".join(cells) + " |")
            claim = ""  # named on its first row only
    return "\n".join(lines)


RUNS = "runs"
TABLES = {
    "claims": lambda runs=Path(RUNS): claims_table(runs),
    "trained-embeddings": lambda runs=Path(RUNS): trained_embeddings_table(runs),
    "frozen-vectors": lambda runs=Path(RUNS): frozen_vectors_table("frozen-vectors", runs),
    "every-word": lambda runs=Path(RUNS): frozen_vectors_table("every-word", runs),
    "steps": lambda runs=Path(RUNS): steps_table(runs),
}


def main(argv: list[str] | None = None) -> None:
    results_script.run(__file__, __doc__.splitlines()[0], TABLES, argv, runs=RUNS)


if __name__ == "__main__":
    main()
