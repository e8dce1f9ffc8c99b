"""The active-learning loop: a random seed set, then rounds of train → evaluate → acquire up to a budget.

    run_active_learning(ActiveLearningConfig(dataset="trec", objectives=["supcon-ce", "ce"],
                                             acquisitions=["random", "entropy"], num_seeds=3, output="runs/al-trec"))

Each arm (objective × acquisition × seed) lives in ``OUTPUT/arms/<objective>-<acquisition>-seed<k>/`` with its
``state.json``, written after every round; running again on the same folder continues from the last finished
round. The reference arms (``--reference``: SetFit at equal steps, SetFit at its defaults, logistic regression on
the frozen base) train on the labelled sets of the first objective's arm; then the equal-compute arms
(``--equal-compute``) run with their own acquisitions, each round as long as SetFit at its defaults took.

With the human oracle, rows the user's file already labels are round 0's labelled set, and the rows without a
label are the pool that rounds query (a random seed set is drawn only when the file labels none).
"""

from __future__ import annotations

import io
import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from st_contrastive.active import run_lock
from st_contrastive.active.dataset_fingerprint import check_unchanged
from st_contrastive.active.oracle import HumanOracle, SimulatedOracle
from st_contrastive.active.settings import REFERENCES, ActiveLearningConfig, only_adds_arms
from st_contrastive.active.state import ArmState, Pending
from st_contrastive.arguments import ArgumentError
from st_contrastive.atomic_files import recover_folder, save_folder_atomically, write_atomically
from st_contrastive.run_settings import changed_settings
from st_contrastive.scale.acquisition import PoolModel, acquire, check_installed, random_ids

if TYPE_CHECKING:
    from st_contrastive.active.equal_compute import SetFitTimeBudget
    from st_contrastive.scale.round_training import RoundModel

logger = logging.getLogger(__name__)

# The round's model between its training and the end of the round, in the arm's folder.
TRAINED = "trained-model"


def round_sizes(pool: int, config: ActiveLearningConfig, given: int = 0) -> list[int]:
    """Labelled rows at each round: the ``initial`` seed set, then topped up to each multiple of ``step`` below
    ``budget``, then ``budget`` (1 %, 1 %, 15 %: 1, 2 … 15 %; a 5 % step: 1, 5, 10, 15 %). With ``given`` rows
    labelled already (a person's file), those are round 0's set and the fractions are of the ``pool`` of unlabelled
    rows: ``given``, then ``given`` + each multiple of ``step`` below ``budget``, then ``given`` + ``budget``."""
    last = max(1, round(config.budget * pool))
    steps = {round(k * config.step * pool) for k in range(1, int(config.budget / config.step + 1e-9) + 1)}
    if given:
        return [given] + [given + size for size in sorted({last} | {size for size in steps if 0 < size < last})]
    first = max(1, round(config.initial * pool))
    return sorted({first, last} | {size for size in steps if first < size < last})


def given_labels(config: ActiveLearningConfig, data) -> dict[int, int]:
    """Pool rows that the data labels already and a person need not: all of them with the human oracle, none with
    the simulated one (whose gold labels are what it answers queries with)."""
    if config.oracle != "human":
        return {}
    return {i: label for i, label in enumerate(data.train_labels) if label is not None}


def arm_name(objective: str, acquisition: str, seed: int) -> str:
    return f"{objective}-{acquisition}-seed{seed}"


def experiment_data(config: ActiveLearningConfig):
    """The experiment's data: every arm's evaluation split (the test split, or ``--test-size`` rows of it; with
    ``--dev-size``, that many train rows instead, and the test split is not read); each seed draws its pool from the
    train rows with ``subset_pool(config.pool_size, seed)``."""
    from st_contrastive.data.text_classification import load_text_classification

    data = load_text_classification(config.dataset, config.label_names)
    if config.dev_size:
        return data.with_dev_split(config.dev_size, seed=0)
    return data.subset_test(config.test_size, seed=0)


def run_active_learning(
    config: ActiveLearningConfig, *, progress: bool = True, say: Callable[[str], None] = logger.info
) -> list[dict]:
    """Run (or continue) every arm of ``config``; returns the per-round metrics rows of all arms. ``say`` gets what a
    person labelling by hand should know before the first file (the command line prints it). The run's folder is
    held while the arms run (:mod:`~st_contrastive.active.run_lock`): a second writer is refused."""
    config.check()
    check_installed(config.acquisitions)
    output = Path(config.output)
    data = experiment_data(config)
    if config.oracle == "human":
        say(_human_start(config, data))
    with run_lock.holding(output):  # after the data loaded: a bad file leaves no run folder behind
        check_unchanged(output, config.dataset, data.train_texts)  # the labels are row ids of this file
        _write_config(output, config)
        return _run_arms(config, data, output, progress)


def _run_arms(config: ActiveLearningConfig, data, output: Path, progress: bool) -> list[dict]:
    from st_contrastive.default_model import default_model

    base_model = config.model or default_model()
    rows = []
    for seed in config.seeds:
        seed_data = data.subset_pool(config.pool_size, seed)
        for acquisition in config.acquisitions:
            for objective in config.objectives:
                rows += run_arm(config, seed_data, base_model, objective, acquisition, seed, progress=progress)
            source = ArmState.load(output / "arms" / arm_name(config.objectives[0], acquisition, seed))
            for reference in config.references:
                rows += run_reference_arm(config, seed_data, base_model, reference, source, progress=progress)
            if config.equal_compute:
                rows += _run_equal_compute_arms(config, seed_data, base_model, acquisition, seed, progress)
    return rows


def _human_start(config: ActiveLearningConfig, data) -> str:
    """What the person labelling is about to do: which arm, and whether their file's labels are the first set."""
    source = Path(config.dataset).name
    given = given_labels(config, data)
    pool = len(data.train_texts) - len(given)
    if not pool:
        raise ValueError(
            f"{config.dataset}: every train row has a label, nothing to query with oracle='human'; run "
            "experiments on it with oracle='simulated'"
        )
    arm = (
        f"oracle='human': one arm: {config.objectives[0]}, {config.acquisitions[0]} acquisition, seed 0 "
        f"({Path(config.output) / 'arms' / arm_name(config.objectives[0], config.acquisitions[0], config.seed)})"
    )
    sizes = round_sizes(pool, config, len(given))
    if given:
        return (
            f"{arm}\nFound {len(given)} labelled rows in {source}: round 0 trains on them; the {pool} unlabelled "
            f"rows are the pool, {sizes[-1] - len(given)} of them to label over {len(sizes) - 1} rounds "
            f"(step={config.step}, budget={config.budget}; `initial` is not used)"
        )
    return (
        f"{arm}\nNo labelled rows in {source}: round 0 asks for {sizes[0]} random rows of the {pool}-row pool "
        f"(initial={config.initial})"
    )


def _run_equal_compute_arms(config, data, base_model: str, acquisition: str, seed: int, progress: bool) -> list[dict]:
    """SupCon + CE and CE only (those of ``config.objectives``), each round as long as SetFit at its defaults."""
    from st_contrastive.active.equal_compute import SUFFIX, SetFitTimeBudget
    from st_contrastive.active.settings import EQUAL_COMPUTE_OBJECTIVES

    arms = Path(config.output) / "arms"
    setfit = ArmState.load(arms / arm_name("setfit-defaults", acquisition, seed))
    rows = []
    for objective in [o for o in config.objectives if o in EQUAL_COMPUTE_OBJECTIVES]:
        pace = ArmState.load(arms / arm_name(objective, acquisition, seed))
        rows += run_arm(
            config,
            data,
            base_model,
            objective,
            acquisition,
            seed,
            progress=progress,
            name=objective + SUFFIX,
            budget=SetFitTimeBudget(setfit, pace),
        )
    return rows


def _write_config(output: Path, config: ActiveLearningConfig) -> None:
    """Record the settings; a folder that holds another experiment is refused (its state would not fit)."""
    path = output / "config.json"
    if path.exists():
        saved = ActiveLearningConfig.from_json(json.loads(path.read_text())).to_json()
        current = config.to_json()
        # The folder is the run wherever it was started from: its recorded output path is not a setting.
        changed = list(changed_settings(saved, current, {"output"}))
        if not changed:
            return
        if not only_adds_arms(saved, current):
            raise ValueError(
                f"{output} holds a run with other settings ({', '.join(changed)} differ); resume it, "
                "or choose another output folder"
            )
        # Reference and equal-compute arms train on the labelled sets the run already has: its arms stay valid.
        logger.info("%s: adding arms to the run (%s); its finished arms are kept", output, ", ".join(changed))
    output.mkdir(parents=True, exist_ok=True)
    write_atomically(path, json.dumps(config.to_json(), indent=1))


def run_arm(
    config,
    data,
    base_model: str,
    objective: str,
    acquisition: str,
    seed: int,
    progress: bool = True,
    name: str | None = None,
    budget: SetFitTimeBudget | None = None,
) -> list[dict]:
    """Continue one arm from its state until the budget (or until a person has labels to give). An equal-compute arm
    has a ``name`` other than its ``objective`` and a time ``budget`` that sets its steps in each round (otherwise
    :func:`~st_contrastive.scale.round_training.round_steps`)."""
    from tqdm.auto import tqdm

    from st_contrastive.active.predictions import PREDICTIONS, standing_labels, write_predictions
    from st_contrastive.scale.round_training import RoundModel

    name = name or objective
    folder = Path(config.output) / "arms" / arm_name(name, acquisition, seed)
    state = ArmState.load(folder) or ArmState(name, acquisition, seed)
    given = given_labels(config, data)
    sizes = round_sizes(len(data.train_texts) - len(given), config, len(given))
    oracle = HumanOracle() if config.oracle == "human" else SimulatedOracle(data.train_labels)
    if not state.labelled and state.pending is None:
        if given:  # the user's own labels are round 0's set: nothing to ask before it trains
            state.labelled, state.phase = dict(given), "training"
        else:
            state.pending = Pending(0, random_ids(range(len(data.train_texts)), sizes[0], _round_seed(seed, 0)))
        state.save(folder)
    bar = tqdm(total=len(sizes), initial=len(state.rounds), desc=folder.name, unit="round", disable=not progress)
    while len(state.rounds) < len(sizes):
        round_number = len(state.rounds)
        if state.pending is not None:
            state.label(state.pending.ids, oracle.labels(state.pending, folder, data.train_texts, data.label_names))
            state.save(folder)
        if state.phase in ("evaluating", "acquiring"):  # stopped after training: the round's model is saved
            model = RoundModel.load(_trained_model(folder))
        else:
            model = _train(config, data, state, folder, base_model, objective, seed, budget)
        if state.phase == "evaluating":
            state.current |= _evaluate(data, model, folder)
            state.phase = "acquiring"
            state.save(folder)
        acquired = _acquire(config, data, model, state, sizes, acquisition, seed)
        record = state.current
        _finish_round(
            state,
            record,
            acquired,
            folder,
            model,
            describe=lambda path: _describe_model(path, config, data, state, base_model, objective),
        )
        logger.info(
            "%s round %d: %d labelled, accuracy %s, %.0f s training, %.0f s acquiring",
            folder.name,
            round_number,
            record["labelled"],
            record.get("accuracy"),
            record["train_seconds"],
            record["acquire_seconds"],
        )
        bar.update(1)
        if config.oracle == "human" and state.phase == "done":  # what a person labelling some of the rows came for
            write_predictions(
                Path(config.output) / PREDICTIONS,
                folder / "model",
                data.train_texts,
                standing_labels(state, data.label_names),
            )
    bar.close()
    return metric_rows(state, len(data.train_texts))


def _train(config, data, state: ArmState, folder: Path, base_model, objective, seed, budget) -> RoundModel:
    """Train the round on the labelled rows and save its model as the round's (``TRAINED``): the phase after it,
    evaluating, resumes from that model rather than training again."""
    from st_contrastive.active.equal_compute import epochs
    from st_contrastive.scale.round_training import round_steps, train_round

    round_number = len(state.rounds)
    state.phase, state.current = "training", None
    state.save(folder)
    ids, labels = list(state.labelled), list(state.labelled.values())
    classes = len(data.label_names)
    # From the model the last round saved, once it trained on enough rows a class (a resumed run finds it there).
    warm = bool(state.rounds) and config.training.continues_from(state.rounds[-1]["labelled"], classes)
    steps = budget.steps(round_number) if budget else round_steps(len(ids), classes, config.training, not warm)
    warm_from = folder / "model" if warm else None
    start = time.perf_counter()
    model = train_round(
        objective,
        base_model,
        [data.train_texts[i] for i in ids],
        labels,
        data.label_names,
        config.training,
        folder / "checkpoints",
        _round_seed(seed, round_number),
        steps,
        warm_from,
    )
    train_seconds = time.perf_counter() - start
    save_folder_atomically(folder / TRAINED, model.save)
    state.current = {
        "round": round_number,
        "labelled": len(ids),
        "started_from": f"round {round_number - 1}" if warm_from else "base",
        "train_seconds": round(train_seconds, 2),
        "steps": model.steps,
        "epochs": epochs(model.steps, len(ids), config.training.batch_size),
        "optimisation_seconds": round(model.optimisation_seconds, 3),
    }
    if budget:
        state.current["budget_seconds"] = budget.seconds(round_number)
    state.phase = "evaluating"
    state.save(folder)
    return model


def _trained_model(folder: Path) -> Path:
    """The model of the round in progress: saved after training, or already swapped in as ``model`` by a finish that
    a kill cut short before the state was saved."""
    recover_folder(folder / "model")
    return folder / TRAINED if (folder / TRAINED).is_dir() else folder / "model"


def run_reference_arm(
    config, data, base_model: str, reference: str, source: ArmState, progress: bool = True
) -> list[dict]:
    """``reference`` (setfit, setfit-defaults, logreg) on exactly the labelled set of each round of ``source`` (an
    arm already run)."""
    from tqdm.auto import tqdm

    folder = Path(config.output) / "arms" / arm_name(reference, source.acquisition, source.seed)
    state = ArmState.load(folder) or ArmState(reference, source.acquisition, source.seed)
    folder.mkdir(parents=True, exist_ok=True)  # evaluation writes into it before the first state does
    bar = tqdm(
        total=len(source.rounds), initial=len(state.rounds), desc=folder.name, unit="round", disable=not progress
    )
    while len(state.rounds) < len(source.rounds):
        round_number = len(state.rounds)
        labelled = source.labelled_at(round_number)
        state.labelled = labelled
        start = time.perf_counter()
        model = _train_reference(
            reference,
            base_model,
            [data.train_texts[i] for i in labelled],
            list(labelled.values()),
            data.label_names,
            config.training,
            folder / "checkpoints",
            _round_seed(source.seed, round_number),
            source.rounds[round_number]["steps"],
        )
        record = {
            "round": round_number,
            "labelled": len(labelled),
            "train_seconds": round(time.perf_counter() - start, 2),
            "acquire_seconds": 0.0,
            "labelled_from": source.objective,
            "steps": model.steps,
            "optimisation_seconds": round(model.optimisation_seconds, 3),
        }
        record |= _evaluate(data, model, folder)
        last = round_number + 1 == len(source.rounds)
        _finish_round(state, record, None, folder, model, next_phase="done" if last else "training")
        bar.update(1)
    bar.close()
    return metric_rows(state, len(data.train_texts))


def _train_reference(
    reference: str,
    base_model: str,
    texts: list[str],
    labels: list[int],
    label_names: list[str],
    training,
    output_dir: Path,
    seed: int,
    source_steps: int,
):
    """``source_steps``: the steps the labelling arm's round trained, which SetFit at equal steps trains too."""
    from st_contrastive.active.setfit_reference import train_setfit
    from st_contrastive.scale.round_training import frozen_logistic_regression

    if reference == "logreg":
        return frozen_logistic_regression(base_model, texts, labels, label_names, training)
    if reference == "setfit-defaults":
        return train_setfit(base_model, texts, labels, label_names, output_dir, seed)
    if reference == "setfit":
        return train_setfit(
            base_model,
            texts,
            labels,
            label_names,
            output_dir,
            seed,
            steps=source_steps,
            batch_size=training.batch_size,
            max_seq_length=training.max_seq_length,
        )
    raise ArgumentError("references", reference, f"choose from {', '.join(REFERENCES)}")


def _round_seed(seed: int, round_number: int) -> int:
    return seed * 1000 + round_number


def _evaluate(data, model, folder: Path) -> dict:
    """Test accuracy and macro F1 (nothing when the data has no test split); keeps the test embeddings for t-SNE."""
    from sklearn.metrics import accuracy_score, f1_score

    if not data.test_texts:
        return {}
    start = time.perf_counter()
    embeddings = model.embed(data.test_texts)
    predicted = model.proba_of(embeddings).argmax(axis=1)
    buffer = io.BytesIO()
    np.save(buffer, embeddings.astype(np.float32))
    write_atomically(folder / "test_embeddings.npy", buffer.getvalue())
    return {
        "accuracy": round(100 * accuracy_score(data.test_labels, predicted), 2),
        "f1_macro": round(100 * f1_score(data.test_labels, predicted, average="macro"), 2),
        "eval_seconds": round(time.perf_counter() - start, 2),
    }


def _acquire(config, data, model, state: ArmState, sizes: list[int], acquisition: str, seed: int) -> Pending | None:
    """The next round's queries from the rows neither labelled nor ignored (none after the last round); the time it
    took goes into the round's record."""
    round_number = len(state.rounds)
    start = time.perf_counter()
    acquired = None
    if round_number + 1 < len(sizes):
        unlabelled = [i for i in range(len(data.train_texts)) if i not in state.labelled and i not in state.ignored]
        pick = acquire(
            acquisition,
            PoolModel(data.train_texts, model),
            unlabelled,
            list(state.labelled),
            list(state.labelled.values()),
            sizes[round_number + 1] - len(state.labelled),
            _round_seed(seed, round_number + 1),
            config.bald_samples,
        )
        acquired = Pending(round_number + 1, pick.ids, pick.scores)
    state.current["acquire_seconds"] = round(time.perf_counter() - start, 2)
    return acquired


def _finish_round(
    state: ArmState, record: dict, acquired: Pending | None, folder: Path, model, describe=None, next_phase=None
) -> None:
    """Swap the round's model in as ``model`` (the latest one is what a user takes away), with what ``describe``
    writes beside it, then save the state, in that order: a kill in between finds the round's last phase in the state
    and its model in place, and redoes only that phase."""
    record["acquired"] = acquired.ids if acquired else []
    record["acquired_scores"] = acquired.scores if acquired else None
    state.rounds.append(record)

    def fill(path: Path) -> None:
        if (folder / TRAINED).is_dir():
            os.replace(folder / TRAINED, path)
        else:
            model.save(path)
        if describe:
            describe(path)

    save_folder_atomically(folder / "model", fill)
    state.pending, state.current = acquired, None
    state.phase = next_phase or ("labelling" if acquired else "done")
    state.save(folder)


def _describe_model(model_dir: Path, config, data, state: ArmState, base_model: str, objective: str) -> None:
    """``results.json`` beside the round's model (trained with ``objective``): what it was trained on and scored,
    and the model card (README.md) written from it, which ``st-contrastive push`` / ``--push-to-hub`` upload."""
    from dataclasses import asdict

    from st_contrastive.publishing import write_model_card

    record = state.rounds[-1]
    metrics = {k: record[k] for k in ("accuracy", "f1_macro") if k in record}
    dataset = Path(config.dataset).stem if Path(config.dataset).is_file() else config.dataset  # no local paths
    training = asdict(config.training)
    if objective == "siamese":  # cosine pairs, then logistic regression turned into the same head
        loss_name, loss = "CosineSimilarityLoss", {"objective": "siamese", "repeats": training["siamese_repeats"]}
    else:
        loss_name = "SCALeLoss"
        loss = {
            "objective": objective,
            "temperature": training["temperature"],
            "supcon_weight": training["supcon_weight"] if objective == "supcon-ce" else 0.0,
            "dropout_rates": training["dropout_rates"],
        }
    results = {
        "method": "active",
        "name": model_dir.parent.name,  # the arm: every arm's model folder is called "model"
        "model": base_model,
        "labels": data.label_names,
        "config": {
            "dataset": dataset,
            "acquisition": state.acquisition,
            "seed": state.seed,
            "labelled": len(state.labelled),
            "pool": len(data.train_texts),
            "rounds": len(state.rounds),
            "training": training,
        },
        "train": {"steps": record["steps"], "loss": loss, "loss_name": loss_name},
        "after": {f"{dataset} test": metrics} if metrics else {},
    }
    write_atomically(model_dir / "results.json", json.dumps(results, indent=2) + "\n")
    write_model_card(model_dir)


METRICS = (
    "accuracy",
    "f1_macro",
    "train_seconds",
    "acquire_seconds",
    "eval_seconds",
    "steps",
    "epochs",
    "optimisation_seconds",
    "budget_seconds",
)


def metric_rows(state: ArmState, pool: int) -> list[dict]:
    """One flat row per finished round, for the CSV and the curves."""
    return [
        {
            "objective": state.objective,
            "acquisition": state.acquisition,
            "seed": state.seed,
            "round": r["round"],
            "labelled": r["labelled"],
            "percent": round(100 * r["labelled"] / pool, 2),
        }
        | {k: r[k] for k in METRICS if k in r}
        for r in state.rounds
    ]
