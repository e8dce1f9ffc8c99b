"""What an active-learning arm has done and which phase of a round it is in, written at every phase, so a stopped run
resumes where it was: a kill while training trains the round again, one while evaluating or acquiring goes on from
the round's saved model."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from st_contrastive.atomic_files import write_atomically


@dataclass
class Pending:
    """Rows acquired for ``round`` and not labelled yet (``scores``: their acquisition scores, if any)."""

    round: int
    ids: list[int]
    scores: list[float] | None = None


# A round's phases, in order: its queries wait for labels, then it trains, evaluates and acquires the next queries.
PHASES = ("labelling", "training", "evaluating", "acquiring", "done")


@dataclass
class ArmState:
    """One arm (objective × acquisition × seed): labelled rows in the order they came, each finished round's
    record, and the acquisition waiting for labels. ``labelled`` maps a pool row id to its label id; ``ignored``
    holds rows a person set aside as fitting no label (never trained on, never queried again). ``phase`` is where
    the round in progress is (:data:`PHASES`), and ``current`` its record so far once it has trained."""

    objective: str
    acquisition: str
    seed: int
    labelled: dict[int, int] = field(default_factory=dict)
    rounds: list[dict] = field(default_factory=list)
    pending: Pending | None = None
    ignored: list[int] = field(default_factory=list)
    phase: str = "labelling"
    current: dict | None = None

    def label(self, ids: list[int], labels: list[int | None]) -> None:
        """Add the labels of the pending rows (``None``: the row is ignored), clear ``pending``; the round trains."""
        for i, label in zip(ids, labels, strict=True):
            if i in self.labelled or i in self.ignored:
                raise ValueError(f"pool row {i} is labelled already")  # a bug, never a user's doing
            if label is None:
                self.ignored.append(i)
            else:
                self.labelled[i] = label
        self.pending, self.phase = None, "training"

    def relabel(self, row: int, label: int) -> None:
        """A person's correction of a row labelled (or ignored) in an earlier round; the next round trains on it."""
        if row in self.ignored:
            self.ignored.remove(row)
        elif row not in self.labelled:
            raise ValueError(f"pool row {row} was not labelled in an earlier round")
        self.labelled[row] = label

    def labelled_at(self, round_number: int) -> dict[int, int]:
        """The labelled rows that round ``round_number`` trained on."""
        count = self.rounds[round_number]["labelled"]
        return dict(list(self.labelled.items())[:count])

    def save(self, folder: str | Path) -> None:
        """Write ``state.json`` atomically: a crash leaves the previous round's state, never half a file."""
        path = Path(folder) / "state.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        data = asdict(self) | {"labelled": [[i, label] for i, label in self.labelled.items()]}
        write_atomically(path, json.dumps(data, indent=1))

    @classmethod
    def load(cls, folder: str | Path) -> ArmState | None:
        path = Path(folder) / "state.json"
        if not path.exists():
            return None
        data = json.loads(path.read_text())
        data["labelled"] = {int(i): int(label) for i, label in data["labelled"]}
        data["pending"] = Pending(**data["pending"]) if data["pending"] else None
        return cls(**data)
