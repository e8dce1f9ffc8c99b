"""The settings of an active-learning experiment and of each round's training: no torch, so `--help` is instant."""

from __future__ import annotations

import importlib.util
from dataclasses import asdict, dataclass, field, fields

OBJECTIVES = ("supcon-ce", "ce", "siamese")
EQUAL_COMPUTE_OBJECTIVES = ("supcon-ce", "ce")  # --equal-compute trains these longer
ACQUISITIONS = ("random", "entropy", "least-confidence", "margin", "bald", "coreset")


@dataclass
class RoundTraining:
    """How each round trains; the defaults are the paper's where it gives them (batch 16, lr 2e-5, λ 0.9, τ 0.3,
    dropout views 0.0-0.4, 10 siamese repeats). The paper states no epochs. ``head_learning_rate`` is ours (SetFit's
    head default): at 2e-5 a new linear head barely moves in the few dozen steps a small pool gives (TREC, 90
    labels, 18 steps: 35.5 % test accuracy at 1e-3, 64.0 % at 1e-2)."""

    epochs: float = 5.0
    min_steps: int = 20
    batch_size: int = 16
    learning_rate: float = 2e-5
    head_learning_rate: float = 1e-2
    supcon_weight: float = 0.9
    temperature: float = 0.3
    dropout_rates: list[float] = field(default_factory=lambda: [0.0, 0.1, 0.2, 0.3, 0.4])
    siamese_repeats: int = 10
    max_seq_length: int = 128


# Arms trained on the labelled sets of the first objective's arm (no acquisition of their own): SetFit at the
# objectives' step count, SetFit at its own defaults, and logistic regression on the frozen base (the floor).
REFERENCES = ("setfit", "setfit-defaults", "logreg")
SEEDS = {"simulated": 3, "human": 1}  # a person labels for one arm


@dataclass
class ActiveLearningConfig:
    """An active-learning experiment. Fractions are of the pool: ``initial`` random rows, then ``step`` more per
    round until ``budget`` (the paper: 1 %, 1 %, 15 %). ``pool_size`` draws a random pool of that many training
    rows per seed (a time box); ``test_size`` a fixed random part of the test split (quick checks only)."""

    dataset: str = "trec"
    label_names: list[str] | None = None
    model: str | None = None  # None: all-MiniLM-L6-v2 from the default-model extra
    objectives: list[str] = field(default_factory=lambda: ["supcon-ce"])
    acquisitions: list[str] = field(default_factory=lambda: ["entropy"])
    seeds: int | None = None  # None: 3 with the simulated oracle, 1 with the human one
    initial: float = 0.01
    step: float = 0.01
    budget: float = 0.15
    pool_size: int | None = None
    test_size: int | None = None
    oracle: str = "simulated"
    references: list[str] = field(default_factory=list)
    equal_compute: bool = False
    bald_samples: int = 10
    output: str = "runs/active"
    training: RoundTraining = field(default_factory=RoundTraining)

    def __post_init__(self) -> None:
        if self.seeds is None:
            self.seeds = SEEDS.get(self.oracle, 1)

    def check(self) -> None:
        """Bad settings, each in one line naming the option, before any model loads."""
        for name in self.objectives:
            if name not in OBJECTIVES:
                raise ValueError(f"--objective {name}: choose from {', '.join(OBJECTIVES)}")
        for name in self.acquisitions:
            if name not in ACQUISITIONS:
                raise ValueError(f"--acquisition {name}: choose from {', '.join(ACQUISITIONS)}")
        for name in self.references:
            if name not in REFERENCES:
                raise ValueError(f"--reference {name}: choose from {', '.join(REFERENCES)}")
        setfit = [name for name in self.references if name.startswith("setfit")]
        if setfit and importlib.util.find_spec("setfit") is None:
            raise ValueError(f"--reference {setfit[0]} needs the setfit package: pip install 'st-contrastive[setfit]'")
        if self.oracle not in ("simulated", "human"):
            raise ValueError(f"--oracle {self.oracle}: choose simulated or human")
        if self.seeds < 1:
            raise ValueError(f"--seeds {self.seeds}: at least 1")
        if not 0 < self.initial <= self.budget <= 1 or self.step <= 0:
            raise ValueError(f"need 0 < --initial ({self.initial}) <= --budget ({self.budget}) <= 1 and --step "
                             f"({self.step}) > 0")
        if self.oracle == "human":
            one_arm = ("--oracle human labels for one arm (one objective, one acquisition, one seed); give one value "
                       "or leave the option out")
            for option, values in (("--objective", self.objectives), ("--acquisition", self.acquisitions)):
                if len(values) > 1:
                    raise ValueError(f"{option} {' '.join(values)}: {one_arm}")
            if self.seeds != 1:
                raise ValueError(f"--seeds {self.seeds}: {one_arm}")
            if self.references or self.equal_compute:
                option = f"--reference {' '.join(self.references)}" if self.references else "--equal-compute"
                raise ValueError(f"{option} compares arms on gold labels; use it with --oracle simulated")
        if self.equal_compute:
            if "setfit-defaults" not in self.references:
                raise ValueError("--equal-compute gives each arm the time SetFit at its defaults took: add "
                                 "--reference setfit-defaults")
            if not set(self.objectives) & set(EQUAL_COMPUTE_OBJECTIVES):
                raise ValueError(f"--equal-compute trains {' and '.join(EQUAL_COMPUTE_OBJECTIVES)} longer; "
                                 f"--objective {' '.join(self.objectives)} has neither")

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> ActiveLearningConfig:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known and k != "training"}
        if "reference" in data and "references" not in data:  # a run folder from before several references
            values["references"] = [] if data["reference"] == "none" else [data["reference"]]
        return cls(**values, training=RoundTraining(**data.get("training", {})))


