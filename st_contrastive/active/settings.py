"""The settings of an active-learning experiment (the application around SCALe's rounds): no torch, so `--help` is
instant. How each round trains is :class:`~st_contrastive.config.scale.RoundTraining`, the plugin's."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from st_contrastive.arguments import ArgumentError, at_least, is_number, one_of, positive, require, seed
from st_contrastive.config.scale import (
    ACQUISITIONS,
    MIN_STEPS,
    OBJECTIVES,
    PAIRS_PER_STEP,
    WARM_START_MIN_PER_CLASS,
    RoundTraining,
)

EQUAL_COMPUTE_OBJECTIVES = ("supcon-ce", "ce")  # the equal-compute arms train these longer


def _help(text: str, **more) -> dict:
    return {"help": text, **more}


# Arms trained on the labelled sets of the first objective's arm (no acquisition of their own): SetFit at the
# objectives' step count, SetFit at its own defaults, and logistic regression on the frozen base (the floor).
REFERENCES = ("setfit", "setfit-defaults", "logreg")
ORACLES = ("simulated", "human")
SEEDS = {"simulated": 3, "human": 1}  # a person labels for one arm

# Round settings that run folders recorded before they were removed, each with the test that a recorded value trains
# as today's code does (given the run's other round settings): then it is dropped; otherwise the run is refused.
# Commit 799a0b0 is the last that has them all.
REMOVED_ROUND_SETTINGS: dict[str, Callable[[object, RoundTraining], bool]] = {
    "shrink_to_base": lambda value, rounds: value == 0,
    "freeze_word_embeddings": lambda value, rounds: value is False,
    "frozen_layers": lambda value, rounds: value == 0,
    "new_head": lambda value, rounds: value is False or not rounds.warm_start,  # no round keeps a head anyway
    "refit_head": lambda value, rounds: value is False,
    "label_smoothing": lambda value, rounds: value == 0,
    "pairs_per_step": lambda value, rounds: value == PAIRS_PER_STEP or rounds.pair_share == 0,  # no pair phase
    # the floor was max(min_steps, min_steps_per_class × classes): the same as today's where min_steps_per_class × 2
    # (a classifier's fewest classes) is at least both
    "min_steps": lambda value, rounds: value == MIN_STEPS or max(value, MIN_STEPS) <= 2 * rounds.min_steps_per_class,
    "warm_start_min_per_class": lambda value, rounds: value == WARM_START_MIN_PER_CLASS or not rounds.warm_start,
}
LAST_WITH_REMOVED_ROUND_SETTINGS = "799a0b0"


@dataclass
class ActiveLearningConfig:
    """An active-learning experiment. Fractions are of the pool: ``initial`` random rows, then ``step`` more per
    round until ``budget`` (the paper: 1 %, 1 %, 15 %). ``pool_size`` draws a random pool of that many training
    rows per seed (a time box); ``test_size`` a fixed random part of the test split (quick checks only). Each arm
    runs ``num_seeds`` times, with the seeds ``seed``, ``seed + 1``, …"""

    dataset: str = field(
        default="trec",
        metadata=_help(
            "trec, sst2 or sst5 (shared SentEval files), a .csv/.tsv/.jsonl with text, label (empty: unlabelled) and "
            "optional split, or a Hub dataset id"
        ),
    )
    label_names: list[str] | None = field(
        default=None, metadata=_help("the label set in id order; default: the labels the data uses, sorted")
    )
    model: str | None = field(
        default=None,
        metadata=_help(
            "base model: a local folder or Hub id; default all-MiniLM-L6-v2 from the default-model extra (the paper "
            "used bert-base)"
        ),
    )
    objectives: list[str] = field(
        default_factory=lambda: ["supcon-ce"],
        metadata=_help(
            "supcon-ce: SCALe; ce: CE only (the baseline); siamese: cosine pre-training + logistic regression (§3.2)",
            choices=OBJECTIVES,
        ),
    )
    # kmeans: the best on the mean of the label levels on both dev splits (recipes/scale-against-setfit); entropy
    # lost there.
    acquisitions: list[str] = field(
        default_factory=lambda: ["kmeans"],
        metadata=_help(
            "how each round picks rows to label (kmeans: the rows nearest to k-means centres of the embeddings, "
            "chosen on dev splits; entropy: the paper's; balanced-entropy: entropy spread over the predicted "
            "classes; random)",
            choices=ACQUISITIONS,
        ),
    )
    seed: int = field(default=0, metadata=_help("the first seed; the arms run seeds seed … seed + num_seeds − 1"))
    # None: 3 with the simulated oracle, 1 with the human one.
    num_seeds: int | None = field(
        default=None,
        metadata=_help("runs per arm; default 3, and 1 with the human oracle (a person labels for one arm)"),
    )
    initial: float = field(default=0.01, metadata=_help("random seed set, share of the pool"))
    step: float = field(default=0.01, metadata=_help("labels added per round, share of the pool"))
    budget: float = field(default=0.15, metadata=_help("stop at this share of the pool"))
    pool_size: int | None = field(
        default=None,
        metadata=_help("a random pool of N training rows per seed (time box); default the whole train split"),
    )
    test_size: int | None = field(default=None, metadata=_help("evaluate on N test rows only"))
    dev_size: int | None = field(
        default=None,
        metadata=_help(
            "hold N labelled train rows out of the pool and evaluate on them instead of the test split, which is "
            "then not read (for choices)"
        ),
    )
    oracle: str = field(
        default="simulated",
        metadata=_help(
            "simulated: gold labels; human: rows the file labels are round 0's set, the others the pool; writes "
            "queries-round-NNN.csv and stops until the run is resumed",
            choices=ORACLES,
        ),
    )
    references: list[str] = field(
        default_factory=list,
        metadata=_help(
            "also train, on the labelled sets of the first objective: setfit (SetFit at the objectives' step count), "
            "setfit-defaults (SetFit at its own settings, 20 pair iterations), logreg (logistic regression on the "
            "frozen base, the floor); default none; a finished run given more of them keeps its arms",
            choices=REFERENCES,
        ),
    )
    equal_compute: bool = field(
        default=False,
        metadata=_help(
            "also train supcon-ce and ce, each round, for as long as setfit-defaults took on it (needs the "
            "setfit-defaults reference); a finished run given it keeps its arms"
        ),
    )
    bald_samples: int = field(default=10, metadata=_help("MC dropout passes of bald"))
    output: str = field(default="runs/active", metadata=_help("run folder (state, metrics, plots, models)"))
    training: RoundTraining = field(default_factory=RoundTraining)

    def __post_init__(self) -> None:
        one_of("oracle", self.oracle, ORACLES)
        if self.num_seeds is None:
            self.num_seeds = SEEDS[self.oracle]
        for argument, values, choices in (
            ("objectives", self.objectives, OBJECTIVES),
            ("acquisitions", self.acquisitions, ACQUISITIONS),
            ("references", self.references, REFERENCES),
        ):
            for value in values:
                one_of(argument, value, choices)
        seed("seed", self.seed)
        at_least("num_seeds", self.num_seeds, 1)
        require("initial", self.initial, is_number(self.initial) and 0 < self.initial <= 1, "must be in (0, 1]")
        require(
            "budget",
            self.budget,
            is_number(self.budget) and self.initial <= self.budget <= 1,
            f"must be at least initial={self.initial} and at most 1",
        )
        positive("step", self.step)
        for argument in ("pool_size", "test_size", "dev_size"):
            if getattr(self, argument) is not None:
                at_least(argument, getattr(self, argument), 1)
        at_least("bald_samples", self.bald_samples, 1)
        if self.oracle == "human":
            one_arm = "the human oracle labels for one arm (one objective, one acquisition, one seed)"
            require("objectives", self.objectives, len(self.objectives) == 1, one_arm)
            require("acquisitions", self.acquisitions, len(self.acquisitions) == 1, one_arm)
            require("num_seeds", self.num_seeds, self.num_seeds == 1, one_arm)
            require(
                "references",
                self.references,
                not self.references,
                "compare arms on gold labels: use them with the simulated oracle",
            )
            require(
                "equal_compute",
                True,
                not self.equal_compute,
                "compares arms on gold labels: use it with the simulated oracle",
            )
        if self.equal_compute:
            require(
                "references",
                self.references,
                "setfit-defaults" in self.references,
                "the equal-compute arms train for the time SetFit at its defaults took: add setfit-defaults",
            )
            require(
                "objectives",
                self.objectives,
                bool(set(self.objectives) & set(EQUAL_COMPUTE_OBJECTIVES)),
                f"the equal-compute arms are {' and '.join(EQUAL_COMPUTE_OBJECTIVES)} trained longer: name one of them",
            )

    @property
    def seeds(self) -> range:
        return range(self.seed, self.seed + self.num_seeds)

    def check(self) -> None:
        """What the settings need installed: SetFit for its reference arms."""
        setfit = [name for name in self.references if name.startswith("setfit")]
        if setfit and importlib.util.find_spec("setfit") is None:
            raise ArgumentError(
                "references", setfit[0], "needs the setfit package: pip install 'st-contrastive[active]'"
            )

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> ActiveLearningConfig:
        """The settings a run folder recorded (``to_json()``). A round setting since removed
        (:data:`REMOVED_ROUND_SETTINGS`) is dropped where its value trains as today's code does, and refused with an
        ``ArgumentError`` otherwise."""
        return cls(
            **{k: v for k, v in data.items() if k != "training"}, training=_round_training(data.get("training", {}))
        )


def _round_training(recorded: dict) -> RoundTraining:
    rounds = RoundTraining(**{k: v for k, v in recorded.items() if k not in REMOVED_ROUND_SETTINGS})
    for key, value in recorded.items():
        if key in REMOVED_ROUND_SETTINGS and not REMOVED_ROUND_SETTINGS[key](value, rounds):
            raise ArgumentError(
                f"training.{key}",
                value,
                "the run trained with a round setting that st_contrastive no longer has; continue it with the "
                f"package at commit {LAST_WITH_REMOVED_ROUND_SETTINGS}, the last that has it",
            )
    return rounds


def only_adds_arms(saved: dict, current: dict) -> bool:
    """Whether the settings ``current`` differ from a run's ``saved`` ones (both as ``to_json()`` gives them) only by
    arms added: more reference arms, or equal-compute arms. Those train on the labelled sets the run already
    has, so a finished run gains them and keeps its arms."""
    others = {k for k in saved.keys() | current.keys() if saved.get(k) != current.get(k)} - {
        "references",
        "equal_compute",
        "output",
    }  # the folder is the run, wherever it was started from
    return (
        not others
        and set(saved.get("references", [])) <= set(current.get("references", []))
        and bool(current.get("equal_compute") or not saved.get("equal_compute"))
    )
