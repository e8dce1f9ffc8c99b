"""What an active-learning arm has done, written after every round so a stopped run resumes where it was."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass
class Pending:
    """Rows acquired for ``round`` and not labelled yet (``scores``: their acquisition scores, if any)."""

    round: int
    ids: list[int]
    scores: list[float] | None = None


@dataclass
class ArmState:
    """One arm (objective × acquisition × seed): labelled rows in the order they came, each finished round's
    record, and the acquisition waiting for labels. ``labelled`` maps a pool row id to its label id."""

    objective: str
    acquisition: str
    seed: int
    labelled: dict[int, int] = field(default_factory=dict)
    rounds: list[dict] = field(default_factory=list)
    pending: Pending | None = None

    def label(self, ids: list[int], labels: list[int]) -> None:
        """Add the labels of the pending rows and clear ``pending``."""
        for i, label in zip(ids, labels, strict=True):
            if i in self.labelled:
                raise ValueError(f"pool row {i} is labelled already")  # a bug, never a user's doing
            self.labelled[i] = label
        self.pending = None

    def labelled_at(self, round_number: int) -> dict[int, int]:
        """The labelled rows that round ``round_number`` trained on."""
        count = self.rounds[round_number]["labelled"]
        return dict(list(self.labelled.items())[:count])

    def save(self, folder: str | Path) -> None:
        """Write ``state.json`` atomically: a crash leaves the previous round's state, never half a file."""
        path = Path(folder) / "state.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        data = asdict(self) | {"labelled": [[i, label] for i, label in self.labelled.items()]}
        temporary = path.with_suffix(".json.tmp")
        temporary.write_text(json.dumps(data, indent=1))
        os.replace(temporary, path)

    @classmethod
    def load(cls, folder: str | Path) -> ArmState | None:
        path = Path(folder) / "state.json"
        if not path.exists():
            return None
        data = json.loads(path.read_text())
        data["labelled"] = {int(i): int(label) for i, label in data["labelled"]}
        data["pending"] = Pending(**data["pending"]) if data["pending"] else None
        return cls(**data)
