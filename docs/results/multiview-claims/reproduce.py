"""The paper's multi-view claims before and after, each comparison read from the two kept tables, each verdict by rule.

Before is docs/results/multiview-before (trained word embeddings, 150 steps, seeds 1 and 2), after is
docs/results/multiview-wv (frozen spaCy vectors, 200 steps, seeds 1, 2 and 3). This script trains nothing: it reads
the results.json of both (their own scripts remake them). A comparison is the difference of two arms' means (× 100,
shown to one decimal); it holds where that shown difference is above zero, and it is beyond 2 std where it is above
twice the larger std (over seeds) of its two arms.

    .venv/bin/python docs/results/multiview-claims/reproduce.py

Prints the table as docs/multiview.md shows it and writes table.md beside this file (a second).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # docs/results: the command line its scripts share
import results_script

HERE = Path(__file__).resolve().parent
ARMS = {"seq-seq": "SEQ+SEQ", "dep-seq": "DEP+SEQ", "dep-const": "DEP+CONST"}
MEASURES = {"transfer": "transfer avg", "sick-r": "SICK-R r", "sick-cos": "SICK cos ρ"}
MULTI_VIEW = [("dep-seq", "seq-seq"), ("dep-const", "seq-seq")]
CONST_BEST = [("dep-const", "dep-seq"), ("dep-const", "seq-seq")]
AGAINST_RANDOM = [(arm, f"random-{arm}") for arm in ARMS]
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


def before() -> dict[str, list[dict]]:
    """Each arm's runs (one dict of scores a seed) in multiview-before, by arm name (seq-seq, random-dep-const)."""
    runs = json.loads((HERE.parent / "multiview-before" / "results.json").read_text())
    arms: dict[str, list[dict]] = {}
    for name, scores in runs.items():
        arms.setdefault(name.rsplit("-seed", 1)[0], []).append(scores)
    return arms


def after() -> dict[str, list[dict]]:
    """The same of multiview-wv, whose arms are named by their views (dep,seq; random-dep,seq)."""
    runs = json.loads((HERE.parent / "multiview-wv" / "results.json").read_text())["runs"]
    return {arm.replace(",", "-"): list(seeds.values()) for arm, seeds in runs.items()}


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


def table() -> str:
    measured = (before(), after())
    lines = ["| claim (the paper) | measure: comparisons | before | held? | after | holds now? |", "|---" * 6 + "|"]
    for claim, rows in CLAIMS.items():
        for measure, comparisons, pairs in rows:
            names = [
                ARMS[pair[0]] if pair[1].startswith("random") else f"{ARMS[pair[0]]} over {ARMS[pair[1]]}"
                for pair in pairs
            ]
            cells = []
            for arms in measured:
                found = [difference(arms, measure, pair) for pair in pairs]
                cells += [
                    " / ".join(
                        "–" if result is None else f"{result[0]:+.1f}" if result[0] else "0.0" for result in found
                    ),
                    verdict(found, names),
                ]
            lines.append(f"| {claim} | {MEASURES[measure]}: {comparisons} | " + " | ".join(cells) + " |")
            claim = ""  # named on its first row only
    return "\n".join(lines)


TABLES = {"table": table}


def main(argv: list[str] | None = None) -> None:
    results_script.run(__file__, __doc__.splitlines()[0], TABLES, argv)


if __name__ == "__main__":
    main()
