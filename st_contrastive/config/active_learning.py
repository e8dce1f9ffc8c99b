"""The settings of an active-learning experiment and of each round's training: no torch, so `--help` is instant."""

from __future__ import annotations

import importlib.util
from dataclasses import asdict, dataclass, field, fields

from st_contrastive.config.training import TrainSettings
from st_contrastive.options import OUTPUT, option, same_option

OBJECTIVES = ("supcon-ce", "ce", "siamese")
EQUAL_COMPUTE_OBJECTIVES = ("supcon-ce", "ce")  # --equal-compute trains these longer
ACQUISITIONS = ("random", "entropy", "least-confidence", "margin", "bald", "coreset", "balanced-entropy", "kmeans")


ROUND = "each round's training"


@dataclass
class RoundTraining:
    """How each round trains. The paper's settings where it gives them (batch 16, lr 2e-5, λ 0.9, τ 0.3, 10 siamese
    repeats); the rest were chosen on a dev split (docs/few-labels.md): each round continues from the last round's
    model, trains 10 epochs, and SCALe encodes two dropout views (0.0 and 0.1) instead of the paper's five, which
    pays for the epochs. ``head_learning_rate`` is ours (SetFit's head default): at 2e-5 a new linear head barely
    moves in the few dozen steps a small pool gives (TREC, 90 labels, 18 steps: 35.5 % test accuracy at 1e-3,
    64.0 % at 1e-2). The options every command shares are :class:`TrainSettings`' own declarations, with a round's
    defaults."""

    epochs: float = same_option(TrainSettings, "epochs", 10.0, group=ROUND, help="passes over the labelled rows")
    min_steps: int = option(10, group=ROUND, help="at least this many steps a round")
    batch_size: int = same_option(TrainSettings, "batch_size", 16, group=ROUND)
    learning_rate: float = same_option(
        TrainSettings, "learning_rate", 2e-5, group=ROUND, help="encoder learning rate (AdamW)"
    )
    head_learning_rate: float = option(1e-2, group=ROUND, help="learning rate of the softmax head")
    supcon_weight: float = option(0.9, group=ROUND, help="λ of supcon-ce")
    temperature: float = option(0.3, group=ROUND, help="τ of supcon-ce")
    dropout_rates: list[float] = option(
        [0.0, 0.1], group=ROUND, help="one view per rate (supcon-ce; the paper: 0.0 0.1 0.2 0.3 0.4)"
    )
    siamese_repeats: int = option(10, group=ROUND, help="pairs per sentence and label relation (siamese)")
    warm_start: bool = option(
        True,
        group=ROUND,
        help="start each round from the previous round's model (encoder and "
        "head); --no-warm-start: from the base model, as the paper does (supcon-ce, ce)",
    )
    max_seq_length: int = option(128, group=ROUND, help="tokens per text")


# Arms trained on the labelled sets of the first objective's arm (no acquisition of their own): SetFit at the
# objectives' step count, SetFit at its own defaults, and logistic regression on the frozen base (the floor).
REFERENCES = ("setfit", "setfit-defaults", "logreg")
SEEDS = {"simulated": 3, "human": 1}  # a person labels for one arm
EXPERIMENT = "experiment"


@dataclass
class ActiveLearningConfig:
    """An active-learning experiment. Fractions are of the pool: ``initial`` random rows, then ``step`` more per
    round until ``budget`` (the paper: 1 %, 1 %, 15 %). ``pool_size`` draws a random pool of that many training
    rows per seed (a time box); ``test_size`` a fixed random part of the test split (quick checks only). Each field
    is the command-line option of the same name."""

    dataset: str = option(
        "trec",
        help="trec, sst2 or sst5 (shared SentEval files), a .csv/.tsv/.jsonl with text, label "
        "(empty: unlabelled) and optional split, or a Hub dataset id",
    )
    label_names: list[str] | None = option(
        None, help="the label set in id order; default: the labels the data uses, sorted"
    )
    model: str | None = option(
        None,
        help="base model: a local folder or Hub id; default all-MiniLM-L6-v2 from the "
        "default-model extra (the paper used bert-base)",
    )
    objectives: list[str] = option(
        ["supcon-ce"],
        group=EXPERIMENT,
        flag="--objective",
        choices=OBJECTIVES,
        help="supcon-ce: SCALe; ce: CE only (the baseline); siamese: cosine pre-training + logistic regression (§3.2)",
    )
    # kmeans: the best on the mean of the label levels on both dev splits (docs/few-labels.md); entropy lost there.
    acquisitions: list[str] = option(
        ["kmeans"],
        group=EXPERIMENT,
        flag="--acquisition",
        choices=ACQUISITIONS,
        help="how each round picks rows to label (kmeans: the rows nearest to k-means "
        "centres of the embeddings, chosen on dev splits; entropy: the paper's; "
        "balanced-entropy: entropy spread over the predicted classes; random)",
    )
    # None: 3 with the simulated oracle, 1 with the human one.
    num_seeds: int | None = option(
        None,
        group=EXPERIMENT,
        deprecated=("--seeds",),
        help="runs per arm (seeds 0 … N−1); default 3, and 1 with --oracle human (a person labels for one arm)",
    )
    initial: float = option(0.01, group=EXPERIMENT, help="random seed set, share of the pool")
    step: float = option(0.01, group=EXPERIMENT, help="labels added per round, share of the pool")
    budget: float = option(0.15, group=EXPERIMENT, help="stop at this share of the pool")
    pool_size: int | None = option(
        None,
        group=EXPERIMENT,
        help="a random pool of N training rows per seed (time box); default the whole train split",
    )
    test_size: int | None = option(None, group=EXPERIMENT, help="evaluate on N test rows only")
    dev_size: int | None = option(
        None,
        group=EXPERIMENT,
        help="hold N labelled train rows out of the pool and "
        "evaluate on them instead of the test split, which is then not read (for choices)",
    )
    oracle: str = option(
        "simulated",
        group=EXPERIMENT,
        choices=("simulated", "human"),
        help="simulated: gold "
        "labels; human: rows the file labels are round 0's set, the others the pool; writes "
        "queries-round-NNN.csv and stops until --resume-from-checkpoint",
    )
    references: list[str] = option(
        [],
        group=EXPERIMENT,
        flag="--reference",
        choices=REFERENCES,
        help="also train, on "
        "the labelled sets of the first objective: setfit (SetFit at the objectives' step "
        "count), setfit-defaults (SetFit at its own settings, 20 pair iterations), logreg "
        "(logistic regression on the frozen base, the floor); default none; a finished "
        "run given more of them keeps its arms",
    )
    equal_compute: bool = option(
        False,
        group=EXPERIMENT,
        help="also train supcon-ce and ce, each round, for as long "
        "as setfit-defaults took on it (needs --reference setfit-defaults); a finished run "
        "given it keeps its arms",
    )
    bald_samples: int = option(10, group=EXPERIMENT, help="MC dropout passes of bald")
    output: str = option("runs/active", group=OUTPUT, help="run folder (state, metrics, plots, models)")
    training: RoundTraining = field(default_factory=RoundTraining)

    def __post_init__(self) -> None:
        if self.num_seeds is None:
            self.num_seeds = SEEDS.get(self.oracle, 1)

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
            raise ValueError(f"--reference {setfit[0]} needs the setfit package: pip install 'st-contrastive[active]'")
        if self.oracle not in ("simulated", "human"):
            raise ValueError(f"--oracle {self.oracle}: choose simulated or human")
        if self.num_seeds < 1:
            raise ValueError(f"--num-seeds {self.num_seeds}: at least 1")
        if not 0 < self.initial <= self.budget <= 1 or self.step <= 0:
            raise ValueError(
                f"need 0 < --initial ({self.initial}) <= --budget ({self.budget}) <= 1 and --step ({self.step}) > 0"
            )
        if self.oracle == "human":
            one_arm = (
                "--oracle human labels for one arm (one objective, one acquisition, one seed); give one value "
                "or leave the option out"
            )
            for option, values in (("--objective", self.objectives), ("--acquisition", self.acquisitions)):
                if len(values) > 1:
                    raise ValueError(f"{option} {' '.join(values)}: {one_arm}")
            if self.num_seeds != 1:
                raise ValueError(f"--num-seeds {self.num_seeds}: {one_arm}")
            if self.references or self.equal_compute:
                option = f"--reference {' '.join(self.references)}" if self.references else "--equal-compute"
                raise ValueError(f"{option} compares arms on gold labels; use it with --oracle simulated")
        if self.equal_compute:
            if "setfit-defaults" not in self.references:
                raise ValueError(
                    "--equal-compute gives each arm the time SetFit at its defaults took: add "
                    "--reference setfit-defaults"
                )
            if not set(self.objectives) & set(EQUAL_COMPUTE_OBJECTIVES):
                raise ValueError(
                    f"--equal-compute trains {' and '.join(EQUAL_COMPUTE_OBJECTIVES)} longer; "
                    f"--objective {' '.join(self.objectives)} has neither"
                )

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> ActiveLearningConfig:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known and k != "training"}
        if "seeds" in data and "num_seeds" not in data:  # a run folder from before the option vocabulary
            values["num_seeds"] = data["seeds"]
        if "reference" in data and "references" not in data:  # a run folder from before several references
            values["references"] = [] if data["reference"] == "none" else [data["reference"]]
        # A run folder from before --warm-start trained every round from the base: it goes on doing so.
        return cls(**values, training=RoundTraining(**{"warm_start": False, **data.get("training", {})}))


def only_adds_arms(saved: dict, current: dict) -> bool:
    """Whether the settings ``current`` differ from a run's ``saved`` ones (both as ``to_json()`` gives them) only by
    arms added: more ``--reference`` arms, or ``--equal-compute``. Those train on the labelled sets the run already
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
