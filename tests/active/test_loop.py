"""The active-learning loop with a tiny real model: the human oracle's file round trip, refused label files that
leave the state as it was, an exact resume after a crash, the reference arm's labelled sets, and the reports."""

import csv
import json
import re
from dataclasses import asdict

import numpy as np
import pytest
from huggingface_hub import ModelCard
from sentence_transformers import SentenceTransformer
from support_tickets import SUPPORT, fill, human_run_command, write_support_csv

from st_contrastive.active import ActiveLearningConfig, ArmState, AwaitingLabels, round_sizes
from st_contrastive.active import loop as loop_module
from st_contrastive.active.report import summarize, write_reports
from st_contrastive.commands.cli import main as cli_main
from st_contrastive.data.text_classification import load_text_classification
from st_contrastive.models import LabelClassifier
from st_contrastive.scale import RoundTraining
from st_contrastive.scale.round_training import siamese_pairs

# The rounds here train one epoch of a handful of rows: at least 2 steps, not the fixed 10 (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("short_rounds")

QUESTIONS = {
    "HUM": [
        "Who wrote Hamlet ?",
        "Who painted the Mona Lisa ?",
        "Who invented the telephone ?",
        "Who was the first president ?",
        "Who discovered penicillin ?",
        "Who sang Thriller ?",
        "Who built the pyramids ?",
        "Who founded Rome ?",
    ],
    "LOC": [
        "Where is Lima ?",
        "Where is the Eiffel Tower ?",
        "Where do kangaroos live ?",
        "Where is Everest ?",
        "Where is the Nile ?",
        "Where was Mozart born ?",
        "Where is Tokyo ?",
        "Where is Mount Fuji ?",
    ],
    "NUM": [
        "How far is the moon ?",
        "How many legs has a spider ?",
        "How old is the sun ?",
        "How tall is Everest ?",
        "How many days in a year ?",
        "How deep is the ocean ?",
        "How long is the Nile ?",
        "How fast is light ?",
    ],
}


def write_questions(path, train_labels: bool) -> str:
    """24 training questions (3 classes), labelled or not, and 6 labelled test questions, as a user's CSV."""
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["text", "label", "split"])
        for label, texts in QUESTIONS.items():
            writer.writerows([text, label if train_labels else "", "train"] for text in texts)
            writer.writerows([text.replace("?", "today ?"), label, "test"] for text in texts[:2])
    return str(path)


@pytest.fixture()
def dataset_csv(tmp_path):
    """Every question labelled: what the simulated oracle answers with."""
    return write_questions(tmp_path / "questions.csv", train_labels=True)


@pytest.fixture()
def unlabelled_csv(tmp_path):
    """The training questions without labels: a person labels them through the queries files."""
    return write_questions(tmp_path / "questions.csv", train_labels=False)


def config(dataset, model, output, **overrides) -> ActiveLearningConfig:
    values = {
        "dataset": dataset,
        "model": model,
        "objectives": ["ce"],
        "acquisitions": ["entropy"],
        "num_seeds": 1,
        "initial": 0.25,
        "step": 0.25,
        "budget": 0.75,
        "output": str(output),
        "training": RoundTraining(epochs=1, from_base_epochs=1, min_steps_per_class=0, batch_size=4),
    }
    return ActiveLearningConfig(**(values | overrides))


GOLD = {text: label for label, texts in QUESTIONS.items() for text in texts}


def test_schedule_of_labelled_rows():
    assert round_sizes(5452, ActiveLearningConfig()) == [round(k * 54.52) for k in range(1, 16)]
    assert round_sizes(1500, ActiveLearningConfig(step=0.05)) == [15, 75, 150, 225]


def test_human_oracle_round_trip_through_the_file(unlabelled_csv, base_model, tmp_path):
    run = config(unlabelled_csv, base_model, tmp_path / "run", oracle="human")
    arm = tmp_path / "run" / "arms" / "ce-entropy-seed0"
    for round_number, expected_rows in enumerate([6, 6, 6]):
        with pytest.raises(AwaitingLabels) as waiting:
            loop_module.run_active_learning(run, progress=False)
        assert waiting.value.path == arm / f"queries-round-{round_number:03d}.csv"
        assert waiting.value.missing == expected_rows
        fill(waiting.value.path, GOLD)
    rows = loop_module.run_active_learning(run, progress=False)
    assert [r["labelled"] for r in rows] == [6, 12, 18]
    state = ArmState.load(arm)
    assert len(state.labelled) == 18 and state.pending is None
    data = load_text_classification(unlabelled_csv)
    assert all(data.label_names[label] == GOLD[data.train_texts[i]] for i, label in state.labelled.items())
    # What the user takes away: a plain checkpoint and its head.
    model = SentenceTransformer(str(arm / "model"))
    head = LabelClassifier.load(str(arm / "model" / "classifier"))
    assert head.labels == ["HUM", "LOC", "NUM"]
    assert len(head.predict(model.encode(["Who is there ?"]))) == 1


def test_an_ignored_row_is_never_trained_on_nor_asked_again_and_the_round_is_topped_up(
    unlabelled_csv, base_model, tmp_path
):
    """A text that fits no label is answered ``(ignored)``: it is set aside, and the next round asks one more row so
    that the labelled set still reaches the schedule's size."""
    run = config(unlabelled_csv, base_model, tmp_path / "run", oracle="human")
    arm = tmp_path / "run" / "arms" / "ce-entropy-seed0"
    ignored = []

    def ignore_first(rows):
        ignored.append(int(rows[0]["id"]))
        return [rows[0] | {"label": "(ignored)"}, *rows[1:]]

    for round_number in range(3):
        with pytest.raises(AwaitingLabels) as waiting:
            loop_module.run_active_learning(run, progress=False)
        fill(waiting.value.path, GOLD, change=ignore_first if round_number < 2 else None)
    rows = loop_module.run_active_learning(run, progress=False)
    # 6 asked, 1 ignored: 5; then 7 asked to reach 12, 1 ignored: 11; then 7 asked to reach 18
    assert [r["labelled"] for r in rows] == [5, 11, 18]
    state = ArmState.load(arm)
    assert state.ignored == ignored and not set(ignored) & set(state.labelled)
    assert [len(r["acquired"]) for r in state.rounds] == [7, 7, 0]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda rows: [rows[0] | {"label": "PERSON"}, *rows[1:]], r"line 2: unknown label 'PERSON'"),
        (lambda rows: [*rows, rows[0]], r"line 8: row id \d+ appears twice"),
        (
            lambda rows: [r | {"round": "3"} for r in rows],
            r"line 2: round '3', but the run waits for the labels of round 1",
        ),
        (lambda rows: rows[:-1], r"row id \d+ \(queried in round 1\) is missing"),
        (lambda rows: [rows[0] | {"id": "999"}, *rows[1:]], r"line 2: row id 999 was not queried in round 1"),
    ],
)
def test_bad_label_files_are_refused_naming_the_row_and_the_state_is_untouched(
    unlabelled_csv, base_model, tmp_path, change, message
):
    run = config(unlabelled_csv, base_model, tmp_path / "run", oracle="human")
    for round_number in range(2):
        with pytest.raises(AwaitingLabels) as waiting:
            loop_module.run_active_learning(run, progress=False)
        if round_number == 0:
            fill(waiting.value.path, GOLD)
    state_file = tmp_path / "run" / "arms" / "ce-entropy-seed0" / "state.json"
    before = state_file.read_bytes()
    fill(waiting.value.path, GOLD)
    good = waiting.value.path.read_text()
    fill(waiting.value.path, GOLD, change)
    with pytest.raises(ValueError, match=message):
        loop_module.run_active_learning(run, progress=False)
    assert state_file.read_bytes() == before
    waiting.value.path.write_text(good)  # corrected: the run goes on
    with pytest.raises(AwaitingLabels, match="queries-round-002"):
        loop_module.run_active_learning(run, progress=False)


def test_the_command_line_refuses_a_bad_label_file_in_one_line(unlabelled_csv, base_model, tmp_path, capsys):
    output = tmp_path / "run"
    cli_main(
        [
            "active",
            "--dataset",
            unlabelled_csv,
            "--model",
            base_model,
            "--objective",
            "ce",
            "--num-seeds",
            "1",
            "--oracle",
            "human",
            "--initial",
            "0.25",
            "--step",
            "0.25",
            "--budget",
            "0.5",
            "--output",
            str(output),
            "--epochs",
            "1",
            "--from-base-epochs",
            "1",
            "--min-steps-per-class",
            "0",
            "--batch-size",
            "4",
        ]
    )
    assert "st-contrastive active --resume-from-checkpoint" in capsys.readouterr().out
    fill(
        output / "arms" / "ce-kmeans-seed0" / "queries-round-000.csv",
        GOLD,
        lambda rows: [rows[0] | {"label": "nope"}, *rows[1:]],
    )
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["active", "--resume-from-checkpoint", str(output)])
    assert str(exit_info.value).count("\n") == 0 and "line 2: unknown label 'nope'" in str(exit_info.value)


def test_labelled_by_hand_then_published_with_its_head(unlabelled_csv, base_model, tmp_path, fake_hub):
    """The human loop through the command line, ending with --resume-from-checkpoint --push-to-hub: the card says what the model
    was trained on and scored, and shows how to load the classifier head."""
    output = tmp_path / "run"
    arm = output / "arms" / "ce-kmeans-seed0"
    cli_main(
        [
            "active",
            "--dataset",
            unlabelled_csv,
            "--model",
            base_model,
            "--objective",
            "ce",
            "--num-seeds",
            "1",
            "--oracle",
            "human",
            "--initial",
            "0.25",
            "--step",
            "0.25",
            "--budget",
            "0.5",
            "--output",
            str(output),
            "--epochs",
            "1",
            "--from-base-epochs",
            "1",
            "--min-steps-per-class",
            "0",
            "--batch-size",
            "4",
        ]
    )
    fill(arm / "queries-round-000.csv", GOLD)
    # Trains round 0, asks again.
    cli_main(["active", "--resume-from-checkpoint", str(output), "--push-to-hub", "me/questions"])
    assert "created" not in fake_hub  # nothing published while labels are awaited
    # Round 0's model folder already holds its card (what `hf upload` would publish), with round 0's score.
    round_zero = json.loads((arm / "model" / "results.json").read_text())["after"]["questions test"]
    card = ModelCard.load(arm / "model" / "README.md")
    assert card.data.model_name == "ce-kmeans-seed0" and "loss:SCALeLoss" in card.data.tags
    assert [(r.dataset_name, r.metric_type, r.metric_value) for r in card.data.eval_results] == [
        ("questions test", "accuracy", round_zero["accuracy"])
    ]
    assert "sentence_transformers_model_id" not in card.text and "SCALe active learning" in card.text
    fill(arm / "queries-round-001.csv", GOLD)
    cli_main(["active", "--resume-from-checkpoint", str(output), "--push-to-hub", "me/questions"])
    card, results = fake_hub["card"], json.loads((arm / "model" / "results.json").read_text())
    last_round = ArmState.load(arm).rounds[-1]
    assert fake_hub["created"][0] == "me/questions" and {"classifier", "modules.json"} <= set(fake_hub["uploaded"])
    assert results["config"]["labelled"] == last_round["labelled"] == 12
    assert "12 labelled rows of" in card and "of a 24-row pool), chosen by kmeans acquisition over 2 rounds" in card
    assert (
        f"| questions test |  | {last_round['accuracy']:.2f} |  |" in card and "12 labelled rows of `questions`" in card
    )
    assert 'LabelClassifier.load("me/questions", subfolder="classifier")' in card and "['HUM', 'LOC', 'NUM']" in card
    assert '"objective": "ce"' in card and "chauhan2022scale" in card
    assert card == (arm / "model" / "README.md").read_text()  # the folder's card, rewritten for the repository


def test_push_to_hub_of_several_arms_is_refused_before_any_work(dataset_csv, base_model, tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        cli_main(
            [
                "active",
                "--dataset",
                dataset_csv,
                "--model",
                base_model,
                "--objective",
                "ce",
                "supcon-ce",
                "--num-seeds",
                "1",
                "--output",
                str(tmp_path / "run"),
                "--push-to-hub",
                "me/questions",
            ]
        )
    assert "--push-to-hub publishes one model and this run has 2 arms" in str(exit_info.value)
    assert str(exit_info.value).count("\n") == 0 and not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("phase", "where"),
    [("training", "objectives.train_round"), ("evaluating", "loop._evaluate"), ("acquiring", "loop.acquire")],
)
def test_a_crash_in_any_phase_resumes_in_that_phase_and_continues_exactly(
    dataset_csv, base_model, tmp_path, monkeypatch, phase, where
):
    """Killed while round 1 trains, evaluates or acquires: the state names the phase, and the resumed run goes on
    from it (a round that had trained is not trained again) to the same labelled rows, queries and accuracies."""
    from st_contrastive.scale import round_training as objectives

    uninterrupted = loop_module.run_active_learning(config(dataset_csv, base_model, tmp_path / "a"), progress=False)
    module = {"objectives": objectives, "loop": loop_module}[where.split(".")[0]]
    name = where.split(".")[1]
    real, trained = getattr(module, name), []
    real_train_round = objectives.train_round

    def counting_train_round(*args, **kwargs):
        trained.append(1)
        return real_train_round(*args, **kwargs)

    def crashing(*args, **kwargs):
        if len(ArmState.load(tmp_path / "b" / "arms" / "ce-entropy-seed0").rounds) == 1:
            raise KeyboardInterrupt  # what a kill leaves: nothing after this line runs
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, crashing)
    with pytest.raises(KeyboardInterrupt):
        loop_module.run_active_learning(config(dataset_csv, base_model, tmp_path / "b"), progress=False)
    arm = tmp_path / "b" / "arms" / "ce-entropy-seed0"
    state = ArmState.load(arm)
    assert (len(state.rounds), state.phase) == (1, phase)
    assert (arm / loop_module.TRAINED).is_dir() == (phase != "training")
    monkeypatch.undo()
    monkeypatch.setattr(objectives, "train_round", counting_train_round)
    resumed = loop_module.run_active_learning(config(dataset_csv, base_model, tmp_path / "b"), progress=False)
    assert len(trained) == (2 if phase == "training" else 1)  # round 1 again only if it had not trained; round 2
    a, b = (ArmState.load(tmp_path / run / "arms" / "ce-entropy-seed0") for run in ("a", "b"))
    assert list(a.labelled.items()) == list(b.labelled.items())  # same rows, same order: nothing acquired twice
    assert [r["acquired"] for r in a.rounds] == [r["acquired"] for r in b.rounds]
    assert [r["accuracy"] for r in uninterrupted] == [r["accuracy"] for r in resumed]
    assert len(set(a.labelled)) == len(a.labelled) == 18
    assert b.phase == "done" and not (arm / loop_module.TRAINED).exists()


def test_another_experiment_in_the_same_folder_is_refused(dataset_csv, base_model, tmp_path):
    loop_module.run_active_learning(config(dataset_csv, base_model, tmp_path / "run", budget=0.25), progress=False)
    with pytest.raises(ValueError, match="other settings \\(budget differ\\)"):
        loop_module.run_active_learning(config(dataset_csv, base_model, tmp_path / "run", budget=0.5), progress=False)


def test_setfit_reference_and_siamese_arms_train_on_the_same_labelled_sets(dataset_csv, base_model, tmp_path):
    run = config(
        dataset_csv,
        base_model,
        tmp_path / "run",
        objectives=["siamese", "supcon-ce"],
        acquisitions=["random"],
        budget=0.5,
        references=["setfit"],
    )
    rows = loop_module.run_active_learning(run, progress=False)
    assert {r["objective"] for r in rows} == {"siamese", "supcon-ce", "setfit"}
    arms = {
        name: ArmState.load(tmp_path / "run" / "arms" / f"{name}-random-seed0")
        for name in ("siamese", "supcon-ce", "setfit")
    }
    for round_number in range(2):  # random acquisition does not depend on the model: one labelled set per round
        sets = [list(arm.labelled_at(round_number).items()) for arm in arms.values()]
        assert sets[0] == sets[1] == sets[2]
    paths = write_reports(tmp_path / "run", rows, title="questions")
    assert paths["learning_curve"].stat().st_size > 0
    table = paths["table"].read_text()
    assert "| setfit | random |" in table and "| supcon-ce | random |" in table
    # Each arm's model states the loss it was trained with, which its card names.
    names = {
        name: json.loads((tmp_path / "run" / "arms" / f"{name}-random-seed0" / "model" / "results.json").read_text())[
            "train"
        ]["loss_name"]
        for name in ("siamese", "supcon-ce")
    }
    assert names == {"siamese": "CosineSimilarityLoss", "supcon-ce": "SCALeLoss"}


def test_setfit_without_a_positive_pair_fits_its_head_alone(base_model, tmp_path, caplog):
    """Three labelled rows of three classes: SetFit's own sampler raises IndexError; the arm fits the head only."""
    from st_contrastive.active.setfit_reference import train_setfit

    texts = ["What is a cat", "Who wrote Hamlet", "Where is Paris"]
    with caplog.at_level("WARNING"):
        model = train_setfit(base_model, texts, [0, 1, 2], ["desc", "hum", "loc"], tmp_path / "setfit", seed=0, steps=4)
    assert model.steps == 0 and "no two of the 3 labelled rows share a label" in caplog.text
    proba = model.proba(texts)  # the head saw all three classes
    assert proba.shape == (3, 3) and np.allclose(proba.sum(axis=1), 1) and (proba > 0).all()


def test_siamese_pairs_follow_the_labels():
    labels = [0, 0, 1, 1, 1, 2]  # class 2 has one sentence: no same-label partner for it
    first, second, targets = siamese_pairs(labels, repeats=3, seed=0)
    for i, j, target in zip(first, second, targets):
        assert i != j and (labels[i] == labels[j]) == (target == 1.0)
    assert sum(1 for i, t in zip(first, targets) if i == 5 and t == 1.0) == 0
    assert sum(1 for t in targets if t == -1.0) == 3 * len(labels)


def test_summary_is_mean_and_std_over_seeds(tmp_path):
    rows = [
        {
            "objective": "ce",
            "acquisition": "random",
            "seed": s,
            "round": 0,
            "labelled": 10,
            "percent": 1.0,
            "accuracy": acc,
            "train_seconds": 2.0,
            "acquire_seconds": 1.0,
        }
        for s, acc in enumerate([50.0, 60.0, 70.0])
    ]
    (summary,) = summarize(rows)
    assert summary["accuracy_mean"] == pytest.approx(np.mean([50, 60, 70]), abs=0.01)
    assert summary["accuracy_std"] == pytest.approx(np.std([50, 60, 70]), abs=0.01)
    paths = write_reports(tmp_path, rows)
    assert "| ce | random | 60.00 ± 8.16 |" in paths["table"].read_text()
    assert "Test accuracy (%)" in paths["table"].read_text()
    assert "Dev accuracy (%)" in write_reports(tmp_path, rows, split="dev")["table"].read_text()  # --dev-size runs
    assert json.loads(paths["metrics_json"].read_text()) == rows
    with paths["metrics_csv"].open() as f:
        assert len(list(csv.DictReader(f))) == 3


def test_user_files_name_the_bad_row(tmp_path):
    path = tmp_path / "texts.csv"
    path.write_text("text,label\nfine text,pos\nother text,\n,neg\n")
    with pytest.raises(ValueError, match=r"row 3: no text"):
        load_text_classification(str(path))
    path.write_text("text,label\nfine text,pos\nother text,\nthird,meh\n")
    with pytest.raises(ValueError, match=r"train row 3 has the label 'meh', not one of \['neg', 'pos'\]"):
        load_text_classification(str(path), label_names=["neg", "pos"])
    data = load_text_classification(str(path))
    assert data.label_names == ["meh", "pos"] and data.train_labels == [1, None, 0] and data.test_texts == []


def test_shared_trec_sst2_and_sst5():
    trec = load_text_classification("trec")
    assert (len(trec.train_texts), len(trec.test_texts)) == (5452, 500)
    assert trec.label_names == ["ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM"]
    sst2 = load_text_classification("sst2")
    assert (len(sst2.train_texts), len(sst2.test_texts), sst2.label_names) == (6920, 1821, ["negative", "positive"])
    # SST-5's names follow its label ids (0 = very negative), not the alphabet; its dev split is left out.
    sst5 = load_text_classification("sst5")
    assert sst5.label_names == ["very negative", "negative", "neutral", "positive", "very positive"]
    assert (len(sst5.train_texts), len(sst5.test_texts)) == (8544, 2210)
    assert sst5.train_labels[0] == 4  # "a stirring , funny and finally transporting re-imagining ...": very positive


def test_a_dataset_folder_goes_through_the_hub_loader(tmp_path):
    """``load_dataset`` on a local folder: the code path a Hub id takes, offline."""
    folder = tmp_path / "my-dataset"
    folder.mkdir()
    (folder / "train.csv").write_text("text,label\nWho wrote Hamlet ?,HUM\nWhere is Lima ?,LOC\nWho sang ?,HUM\n")
    (folder / "test.csv").write_text("text,label\nWhere is Rome ?,LOC\n")
    data = load_text_classification(str(folder))
    assert data.label_names == ["HUM", "LOC"]
    assert (data.train_labels, data.test_texts, data.test_labels) == ([0, 1, 0], ["Where is Rome ?"], [1])


def test_a_bad_data_file_stops_the_run_before_anything_is_written(tmp_path):
    path = tmp_path / "texts.csv"
    path.write_text("text,label\nfine text,pos\n,neg\n")
    with pytest.raises(ValueError, match="row 2: no text"):
        loop_module.run_active_learning(config(str(path), "unused", tmp_path / "run"), progress=False)
    assert not (tmp_path / "run").exists()


def readme_command(starting: str) -> list[str]:
    """The README's command line that starts with ``starting``, as argv (its trailing comment dropped)."""
    import re
    import shlex
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    (line,) = [line for line in readme.splitlines() if line.startswith(starting)]
    return shlex.split(re.sub(r"\s+#.*$", "", line))[1:]  # without `st-contrastive`


def test_the_readme_human_oracle_command_runs_as_written(tmp_path, monkeypatch, capsys):
    """One arm, one seed by default with --oracle human: the documented command writes the first file to label."""
    monkeypatch.chdir(tmp_path)
    write_support_csv(tmp_path / "my_texts.csv", labelled_per_class=0)
    argv = readme_command("st-contrastive active --dataset my_texts.csv")
    assert "--num-seeds" not in argv
    cli_main(argv)
    out = capsys.readouterr().out
    assert "--oracle human: one arm: supcon-ce, kmeans acquisition, seed 0" in out  # the options, as typed
    assert "random rows of the" in out and "(--initial 0.01)" in out and "=" not in out
    queries = tmp_path / "runs" / "mine" / "arms" / "supcon-ce-kmeans-seed0" / "queries-round-000.csv"
    assert f"in {queries.relative_to(tmp_path)}" in out
    assert json.loads((tmp_path / "runs" / "mine" / "config.json").read_text())["num_seeds"] == 1


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--num-seeds", "3"], "--num-seeds 3: the human oracle labels for one arm"),
        (["--objective", "ce", "supcon-ce"], "--objective ce supcon-ce: the human oracle labels for one arm"),
        (["--acquisition", "random", "entropy"], "--acquisition random entropy: the human oracle labels for one arm"),
        (["--reference", "setfit"], "--reference setfit: compare arms on gold labels"),
    ],
)
def test_human_oracle_refuses_a_second_arm_in_one_line(tmp_path, options, message):
    write_support_csv(tmp_path / "my_texts.csv", labelled_per_class=0)
    with pytest.raises(SystemExit) as exit_info:
        cli_main(
            [
                "active",
                "--dataset",
                str(tmp_path / "my_texts.csv"),
                "--oracle",
                "human",
                "--output",
                str(tmp_path / "run"),
                *options,
            ]
        )
    assert message in str(exit_info.value) and str(exit_info.value).count("\n") == 0
    assert not (tmp_path / "run").exists()


def test_human_oracle_refuses_a_file_with_nothing_left_to_label(tmp_path):
    write_support_csv(tmp_path / "my_texts.csv", labelled_per_class=6)
    with pytest.raises(
        SystemExit,
        match=r"my_texts.csv: every train row has a label, nothing to query with "
        r"--oracle human",
    ):
        cli_main(
            [
                "active",
                "--dataset",
                str(tmp_path / "my_texts.csv"),
                "--oracle",
                "human",
                "--output",
                str(tmp_path / "run"),
            ]
        )


def test_labels_in_the_users_file_are_the_first_labelled_set(tmp_path, base_model, capsys):
    """6 of 18 rows labelled: round 0 trains on exactly those, and every query comes from the 12 unlabelled rows."""
    path = tmp_path / "my_texts.csv"
    write_support_csv(path, labelled_per_class=2)
    data = load_text_classification(str(path))
    given = {i: label for i, label in enumerate(data.train_labels) if label is not None}
    output = tmp_path / "run"
    arm = output / "arms" / "ce-kmeans-seed0"
    cli_main(human_run_command(path, base_model, output))
    out = capsys.readouterr().out
    assert "Found 6 labelled rows in my_texts.csv: round 0 trains on them; the 12 unlabelled rows are the pool" in out
    state = ArmState.load(arm)
    assert state.rounds[0]["labelled"] == 6 and state.labelled_at(0) == given  # trained on the user's labels
    assert not (arm / "queries-round-000.csv").exists()
    with (arm / "queries-round-001.csv").open() as f:
        queried = [int(row["id"]) for row in csv.DictReader(f)]
    assert len(queried) == 3 and not set(queried) & set(given)  # 0.25 of the 12-row pool
    assert all(data.train_labels[i] is None for i in queried)
    gold = {text: label for label, texts in SUPPORT.items() for text in texts}
    fill(arm / "queries-round-001.csv", gold)
    cli_main(["active", "--resume-from-checkpoint", str(output)])
    state = ArmState.load(arm)
    assert [r["labelled"] for r in state.rounds] == [6, 9]
    assert list(state.labelled)[:6] == list(given) and not set(state.pending.ids) & set(state.labelled)
    assert len(state.pending.ids) == 3 and all(data.train_labels[i] is None for i in state.pending.ids)


def test_a_round_from_the_base_trains_its_own_epochs_where_given():
    from st_contrastive.scale.round_training import round_steps

    training = RoundTraining(epochs=10, from_base_epochs=40, min_steps_per_class=15, batch_size=16)
    assert round_steps(75, 2, training, from_base=True) == 200  # 5 batches, 40 passes
    assert round_steps(75, 2, training, from_base=False) == 50
    assert round_steps(15, 6, training, from_base=True) == 90  # the class floor still holds
    default = RoundTraining(batch_size=16)  # 45 passes from the base, 15 in a round that continues
    assert (round_steps(75, 2, default), round_steps(75, 2, default, from_base=False)) == (225, 75)
    with pytest.raises(ValueError, match="from_base_epochs=0"):
        RoundTraining(from_base_epochs=0)


def test_min_steps_per_class_is_refused_below_zero():
    with pytest.raises(ValueError, match="min_steps_per_class"):
        RoundTraining(min_steps_per_class=-1)


def test_equal_compute_steps_fill_the_setfit_time_and_never_fall_below_the_usual_round():
    from st_contrastive.active.equal_compute import epochs, equal_compute_steps
    from st_contrastive.scale.round_training import round_steps

    training = RoundTraining(epochs=3, from_base_epochs=3, min_steps_per_class=0, batch_size=16)
    usual = round_steps(75, 6, training)  # the equal-step arm's round: 15 steps
    # SetFit at its defaults took 61.3 s; a step of this arm takes 0.4 s: 154 steps (153.25 rounded up).
    steps = equal_compute_steps(61.3, 0.4, usual)
    assert steps == 154 and steps * 0.4 >= 61.3 > (steps - 1) * 0.4
    assert epochs(steps, 75, 16) == pytest.approx(154 / 5, abs=0.01)  # 75 rows: 5 batches an epoch
    assert equal_compute_steps(2.0, 0.4, usual) == usual == 15
    assert equal_compute_steps(8.0, 0.5, 10) == 16  # exactly 16 steps' worth
    with pytest.raises(ValueError, match="seconds per step must be positive"):
        equal_compute_steps(8.0, 0.0, 10)


def test_reference_arms_and_equal_compute_arms_on_a_trec_slice(base_model, tmp_path):
    """setfit, setfit-defaults and logreg on the first objective's labelled sets, then supcon-ce and ce with the
    time setfit-defaults took: every arm lands in metrics.json, summary.json and results.md with its wall time."""
    import math

    from sentence_transformers import SentenceTransformer

    from st_contrastive.active.equal_compute import equal_compute_steps
    from st_contrastive.active.setfit_reference import SETFIT_PAIR_ITERATIONS
    from st_contrastive.scale.round_training import load_encoder, round_steps

    # no pair phase: a round's steps are round_steps
    training = RoundTraining(epochs=1, from_base_epochs=1, min_steps_per_class=0, batch_size=4, pair_share=0)
    run = ActiveLearningConfig(
        dataset="trec",
        model=base_model,
        objectives=["supcon-ce", "ce"],
        acquisitions=["entropy"],
        num_seeds=1,
        pool_size=20,
        test_size=20,
        initial=0.25,
        step=0.25,
        budget=0.5,
        references=["setfit", "setfit-defaults", "logreg"],
        equal_compute=True,
        output=str(tmp_path / "run"),
        training=training,
    )
    rows = loop_module.run_active_learning(run, progress=False)
    arms = ["supcon-ce", "ce", "setfit", "setfit-defaults", "logreg", "supcon-ce-equal-compute", "ce-equal-compute"]
    assert sorted({r["objective"] for r in rows}) == sorted(arms)
    assert all(r["train_seconds"] > 0 for r in rows) and len(rows) == 2 * len(arms)
    state = {arm: ArmState.load(tmp_path / "run" / "arms" / f"{arm}-entropy-seed0") for arm in arms}
    for round_number, labelled in enumerate([5, 10]):
        for reference in ("setfit", "setfit-defaults", "logreg"):
            assert state[reference].labelled_at(round_number) == state["supcon-ce"].labelled_at(round_number)
        assert (
            state["setfit"].rounds[round_number]["steps"]
            == state["supcon-ce"].rounds[round_number]["steps"]
            == round_steps(labelled, 6, training)
        )
        # SetFit's defaults: 20 positive and 20 negative pairs per labelled row, one epoch of 16 pairs a step.
        assert state["setfit-defaults"].rounds[round_number]["steps"] == math.ceil(
            2 * SETFIT_PAIR_ITERATIONS * labelled / 16
        )
        budget = state["setfit-defaults"].rounds[round_number]["train_seconds"]
        for objective in ("supcon-ce", "ce"):
            pace = state[objective].rounds[round_number]
            timed = state[f"{objective}-equal-compute"].rounds[round_number]
            seconds_per_step = pace["optimisation_seconds"] / pace["steps"]
            assert timed["budget_seconds"] == budget
            assert timed["steps"] == equal_compute_steps(budget, seconds_per_step, pace["steps"])
            # enough steps to fill the budget, to the product's tolerance: seconds kept to 2 and 3 decimals make
            # exact multiples (10 steps of 0.194 s for 1.94 s), which float products miss by 1e-16
            assert timed["steps"] >= budget / seconds_per_step - 1e-9 and timed["steps"] >= pace["steps"]
    # The floor's encoder is the base, untouched.
    texts = ["How far is the moon ?", "Who wrote Hamlet ?"]
    floor = SentenceTransformer(str(tmp_path / "run" / "arms" / "logreg-entropy-seed0" / "model"), device="cpu")
    np.testing.assert_allclose(floor.encode(texts), load_encoder(base_model, 128).encode(texts), atol=1e-5)

    paths = write_reports(tmp_path / "run", rows, title="trec slice")
    assert {r["objective"] for r in json.loads(paths["metrics_json"].read_text())} == set(arms)
    summary = json.loads(paths["summary_json"].read_text())
    assert all("train_seconds_mean" in s for s in summary) and {s["objective"] for s in summary} == set(arms)
    table = paths["table"].read_text()
    assert "| objective | acquisition | 25 % | 50 % | training s / round |" in table
    for arm in arms:
        seconds = np.mean([r["train_seconds"] for r in rows if r["objective"] == arm])
        assert f"| {arm} | entropy |" in table and f" | {seconds:.1f} |" in table
    assert "Below the floor (logreg's mean accuracy at the same round):" in table
    assert "- setfit-defaults: SetFit at its own settings" in table


def test_equal_compute_needs_setfit_at_its_defaults_and_is_refused_before_any_work(tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        cli_main(
            [
                "active",
                "--dataset",
                "trec",
                "--objective",
                "supcon-ce",
                "ce",
                "--reference",
                "setfit",
                "--equal-compute",
                "--output",
                str(tmp_path / "run"),
            ]
        )
    assert (
        "--reference setfit: the equal-compute arms train for the time SetFit at its defaults took: add setfit-defaults"
        in str(exit_info.value)
        and str(exit_info.value).count("\n") == 0
    )
    assert not (tmp_path / "run").exists()


def test_a_finished_run_gains_reference_and_equal_compute_arms_but_keeps_its_settings(dataset_csv, tmp_path):
    """More --reference arms, or --equal-compute, train on the labelled sets the run has: accepted, recorded;
    anything else that differs (a reference taken away, another budget) is refused."""
    output = tmp_path / "run"
    loop_module._write_config(output, config(dataset_csv, "unused", output, references=["logreg"]))
    grown = config(dataset_csv, "unused", output, references=["logreg", "setfit-defaults"], equal_compute=True)
    loop_module._write_config(output, grown)
    assert ActiveLearningConfig.from_json(json.loads((output / "config.json").read_text())) == grown
    with pytest.raises(ValueError, match=r"other settings \(references differ\)"):
        loop_module._write_config(
            output, config(dataset_csv, "unused", output, references=["setfit-defaults"], equal_compute=True)
        )
    with pytest.raises(ValueError, match=r"other settings \(budget, references differ\)"):
        loop_module._write_config(
            output,
            config(
                dataset_csv,
                "unused",
                output,
                budget=1.0,
                references=["logreg", "setfit-defaults", "setfit"],
                equal_compute=True,
            ),
        )


def test_dev_size_evaluates_on_held_out_train_rows_and_never_reads_the_test_split(dataset_csv):
    full = load_text_classification(dataset_csv)
    data = loop_module.experiment_data(config(dataset_csv, "m", "o", dev_size=6))
    assert len(data.test_texts) == 6 and set(data.test_texts) <= set(full.train_texts)
    assert not set(data.test_texts) & set(data.train_texts)  # held out of the pool
    assert len(data.train_texts) == len(full.train_texts) - 6
    assert not set(data.test_texts) & set(full.test_texts)
    with pytest.raises(ValueError, match="dev_size=24: the train split has 24 labelled rows"):
        full.with_dev_split(24, seed=0)


@pytest.mark.parametrize(
    "rounds, rows_a_class, started_from",
    [
        ({}, 0, ["base", "round 0", "round 1"]),
        ({"warm_start": False}, 0, ["base", "base", "base"]),
        # 3 classes: round 0's 6 rows are 2 a class, round 1's 12 are 4
        ({}, 3, ["base", "base", "round 1"]),
        ({"from_base_epochs": 3}, 3, ["base", "base", "round 1"]),
    ],
    ids=["warm-start from the second round", "no-warm-start", "once 3 rows a class", "from-base-epochs"],
)
def test_each_round_continues_from_the_last_rounds_model_unless_told_to_start_from_the_base(
    dataset_csv, base_model, tmp_path, monkeypatch, rounds, rows_a_class, started_from
):
    from st_contrastive.config import scale as scale_settings
    from st_contrastive.scale import round_training as objectives

    starts, train_round = [], objectives.train_round

    def spy(*args, **kwargs):
        starts.append(args[-1])
        return train_round(*args, **kwargs)

    monkeypatch.setattr(objectives, "train_round", spy)
    # the fixed 10 rows a class would keep every round of 18 rows on the base
    monkeypatch.setattr(scale_settings, "WARM_START_MIN_PER_CLASS", rows_a_class)
    # no pair phase: a round's steps are round_steps
    base_rounds = {"epochs": 1, "from_base_epochs": 1, "min_steps_per_class": 0, "batch_size": 4, "pair_share": 0}
    training = RoundTraining(**{**base_rounds, **rounds})
    run = config(dataset_csv, base_model, tmp_path / "run", acquisitions=["random"], training=training)
    loop_module.run_active_learning(run, progress=False)
    arm = tmp_path / "run" / "arms" / "ce-random-seed0"
    records = ArmState.load(arm).rounds
    assert [r["started_from"] for r in records] == started_from
    assert starts == [None if start == "base" else arm / "model" for start in started_from]
    # a round from the base trains --from-base-epochs where given (6 and 12 rows: 2 and 3 batches of 4, 3 passes)
    expected = [objectives.round_steps(r["labelled"], 3, training, r["started_from"] == "base") for r in records]
    assert [r["steps"] for r in records] == expected
    assert expected[:2] == ([6, 9] if "from_base_epochs" in rounds else [2, 3])


def test_a_round_continues_from_the_last_once_it_trained_on_enough_rows_a_class():
    floor = RoundTraining()  # 10 rows a class
    assert not floor.continues_from(15, 6) and floor.continues_from(60, 6) and not floor.continues_from(59, 6)
    assert not RoundTraining(warm_start=False).continues_from(10**6, 2)


def test_a_warm_started_round_keeps_the_last_rounds_head(base_model, tmp_path, monkeypatch):
    from st_contrastive.models.heads.label_classifier import LabelClassifier
    from st_contrastive.scale import round_training as objectives

    loads = []

    class Spy(LabelClassifier):
        @classmethod
        def load(cls, path):
            loads.append(path)
            return LabelClassifier.load(path)

    training = RoundTraining(epochs=1, from_base_epochs=1, min_steps_per_class=0, batch_size=4)
    texts, labels, names = ["a dog runs", "stocks fell", "a cat sleeps", "markets drop"], [0, 1, 0, 1], ["x", "y"]
    objectives.train_round("supcon-ce", base_model, texts, labels, names, training, tmp_path / "c0", 0, 1).save(
        tmp_path / "round0"
    )
    monkeypatch.setattr(objectives, "LabelClassifier", Spy)
    model = objectives.train_round(
        "supcon-ce", base_model, texts, labels, names, training, tmp_path / "c1", 1, 1, warm_from=tmp_path / "round0"
    )
    assert loads == [str(tmp_path / "round0" / "classifier")]
    assert model.classifier.labels == names


def test_the_default_is_warm_start_and_a_run_folder_keeps_what_it_recorded():
    assert RoundTraining().warm_start and ActiveLearningConfig().training.warm_start
    saved = ActiveLearningConfig(training=RoundTraining(warm_start=False)).to_json()
    assert ActiveLearningConfig.from_json(saved).training.warm_start is False


# Round settings removed after they were tried and not chosen; a run folder written before records them all.
RECORDED_AS_TODAY = {
    "shrink_to_base": 0.0,
    "freeze_word_embeddings": False,
    "frozen_layers": 0,
    "new_head": False,
    "refit_head": False,
    "label_smoothing": 0.0,
    "pairs_per_step": 16,
    "min_steps": 10,
    "warm_start_min_per_class": 10,
}


@pytest.mark.parametrize(
    "recorded, kept",
    [
        ({}, {}),
        # values that train as today's code does, given the run's other settings
        ({"pairs_per_step": 8}, {"pair_share": 0.0}),  # no pair phase
        ({"warm_start_min_per_class": 0, "new_head": True}, {"warm_start": False}),  # every round from the base
        ({"min_steps": 30}, {"min_steps_per_class": 15}),  # two classes at least: 30 steps a round, either way
    ],
    ids=["at today's values", "pairs_per_step without pairs", "no warm start", "min_steps below the class floor"],
)
def test_a_run_folder_recording_removed_round_settings_resumes_where_they_train_as_today(
    dataset_csv, tmp_path, recorded, kept
):
    output = tmp_path / "run"
    today = config(dataset_csv, "unused", output)
    today.training = RoundTraining(**{**asdict(today.training), **kept})
    saved = today.to_json()
    saved["training"] |= RECORDED_AS_TODAY | recorded
    output.mkdir()
    (output / "config.json").write_text(json.dumps(saved))
    assert ActiveLearningConfig.from_json(saved) == today
    loop_module._write_config(output, today)  # the same experiment: it continues


@pytest.mark.parametrize(
    "key, value",
    [
        ("shrink_to_base", 0.5),
        ("freeze_word_embeddings", True),
        ("frozen_layers", 3),
        ("new_head", True),
        ("refit_head", True),
        ("label_smoothing", 0.1),
        ("pairs_per_step", 8),
        ("min_steps", 50),
        ("warm_start_min_per_class", 0),
    ],
)
def test_a_run_folder_that_trained_with_a_removed_round_setting_is_refused_naming_it_and_its_commit(
    dataset_csv, tmp_path, key, value
):
    output = tmp_path / "run"
    saved = config(dataset_csv, "unused", output).to_json()
    saved["training"] |= RECORDED_AS_TODAY | {key: value}
    output.mkdir()
    (output / "config.json").write_text(json.dumps(saved))
    message = f"training.{key}={value!r}: the run trained with a round setting that st_contrastive no longer has"
    with pytest.raises(ValueError, match=re.escape(message) + ".* at commit 799a0b0"):
        ActiveLearningConfig.from_json(saved)
    if key == "shrink_to_base":  # the command line says it in one line, before anything loads
        with pytest.raises(SystemExit) as exit_info:
            cli_main(["active", "--resume-from-checkpoint", str(output)])
        assert str(exit_info.value).startswith(f"st-contrastive active: error: {message}")
