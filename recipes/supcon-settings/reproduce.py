"""SupCon + CE on NLI from all-MiniLM-L6-v2: which start the SBERT head needs, and the similarity and temperature the
paper leaves open: the tables of the report beside this file, printed from results.json.

`starts`: the model as shipped (it ends in Normalize) against its Transformer + Pooling copy, STS only; `settings`: on
the copy, cosine at τ 1 and 0.1 and the dot product at τ 1, against CE only. The runs' commands are in the report.

    .venv/bin/python recipes/supcon-settings/reproduce.py {starts,settings}
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # recipes/: the command line its scripts share
import results_script

RESULTS = json.loads((Path(__file__).resolve().parent / "results.json").read_text())
STS = ("stsb-test", "sick-test", "sts avg")


def signed(value: float) -> str:
    return f"{value:+.2f}".replace("-", "−")


def starts() -> str:
    """STS only; each row against the CE-only row of its start, the last one above it (the base row has none)."""
    lines = ["| start | variant | STS-B | SICK-R | STS avg | vs CE |", "|---" * 6 + "|"]
    ce = None
    for name, scores in RESULTS["starts"].items():
        ce = scores if name.endswith("ce-only") else ce
        change = "" if ce is None else f"{scores['sts avg'] - ce['sts avg']:+.2f}"
        lines.append(f"| {name} | " + " | ".join(f"{scores[column]:.2f}" for column in STS) + f" | {change} |")
    return "\n".join(lines)


def settings() -> str:
    """With transfer (where it was scored); every row's averages against CE only."""
    lines = ["| setting | STS-B | SICK-R | STS avg | vs CE | transfer avg | vs CE |", "|---" * 7 + "|"]
    rows = RESULTS["settings"]
    ce = rows["CE only (λ = 0)"]
    for name, scores in rows.items():
        cells = []
        for column in (*STS, "transfer avg"):
            value = scores[column]
            cells.append("" if value is None else f"{value:.2f}")
            if column.endswith("avg"):  # its change against CE only, which has none
                cells.append("" if value is None or scores is ce else signed(value - ce[column]))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


TABLES = {"starts": starts, "settings": settings}

if __name__ == "__main__":
    results_script.run(__file__, __doc__.splitlines()[0], TABLES)
