"""Every bad setting of every sub-command is named in one line, as argparse names its own errors (exit status 2),
from the arguments alone: before torch is imported, before any model loads, and with nothing written.

The table lists argv -> the option and value the error line starts with. All cases run in one subprocess (each in
well under a second, timed there); each case must leave the working folder exactly as it found it.

A rule of a settings dataclass (``TrainSettings``, ``EvaluationSettings``, ``Matryoshka``, a loss's settings) is
tested once, at its dataclass (tests/test_arguments.py); here each command shows once per dataclass that it maps the
refusal to exit 2 naming its option. The checks only the command line makes (paths, Hub ids offline, the output
folder, resume) are tested for every command that makes them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

TRAINING_COMMANDS = ("declutr", "simcse", "tsdae", "ct", "supcon", "multiview")

# What every training recipe shares: a TrainSettings rule and an EvaluationSettings rule said as their options
# (each rule is tested at its dataclass), --push-to-hub and the run-folder rules: (args, expected start of the line).
TRAINING_RULES = [
    (["--learning-rate=-1e-5"], "--learning-rate -1e-05: must be above 0"),
    (
        ["--max-seconds", "60", "--resume-from-checkpoint", "interrupted"],
        "--max-seconds 60: cannot be combined with resume_from_checkpoint",
    ),
    (["--eval-tasks", "nope"], "--eval-tasks nope: Unknown task(s) 'nope'"),
    (["--push-to-hub", "no-slash"], "--push-to-hub no-slash: is not a Hub repository id"),
    (["--resume-from-checkpoint", "missing"], "--resume-from-checkpoint missing: no such folder"),
    (["--resume-from-checkpoint", "empty"], "--resume-from-checkpoint empty: no checkpoint-N folder in it"),
    (["--resume-from-checkpoint", "torn"], "--resume-from-checkpoint torn: every checkpoint in it is torn"),
    (
        ["--resume-from-checkpoint", "torn/checkpoints/checkpoint-2"],
        "--resume-from-checkpoint torn/checkpoints/checkpoint-2: torn checkpoint, optimizer.pt is cut short",
    ),
    (["--resume-from-checkpoint", "interrupted", "--overwrite"], "--overwrite: would remove the run being resumed"),
    (["--output", "finished"], "--output finished: holds a finished run (results.json): add --overwrite"),
    (
        ["--output", "interrupted"],
        (
            "--output interrupted: holds an interrupted run (its last complete checkpoint is "
            "checkpoint-2): continue it with --resume-from-checkpoint interrupted, or add --overwrite"
        ),
    ),
]
# The recipes that start from a --model (multi-view builds its encoders from the corpus).
MODEL_COMMANDS = ("declutr", "simcse", "tsdae", "ct", "supcon")
MODEL_RULES = [
    (["--model", "empty"], "--model empty: a folder without a model"),
    (["--model", "nobody/not-cached"], "--model nobody/not-cached: not in the local Hugging Face cache"),
    (["--model", "./missing"], "--model ./missing: no such folder"),
    (
        ["--model", "base/inner", "--output", "base", "--overwrite"],
        "--model base/inner: lies inside --output base, which --overwrite removes",
    ),
]

COMMAND_RULES = {
    "declutr": [
        (["--dataset", "missing.jsonl"], "--dataset missing.jsonl: no such file or folder"),
        # A file that a model load would otherwise wait for: read now, named by file and line.
        (["--dataset", "latin1.jsonl"], "--dataset latin1.jsonl, line 2: not UTF-8 text (byte 0xe9 at column 14)"),
        (["--dataset", "body.jsonl"], "--dataset body.jsonl: no 'text' field; its fields are ['body']"),
        (["--dataset", "nothing.jsonl"], "--dataset nothing.jsonl: no rows"),
        (["--max-rows", "0"], "--max-rows 0: must be at least 1"),
        (["--num-anchors", "0"], "--num-anchors 0: must be at least 1"),
        (["--num-positives", "0"], "--num-positives 0: must be at least 1"),
        (["--min-span-length", "0"], "--min-span-length 0: must be at least 1"),
        (["--max-span-length", "5"], "--max-span-length 5: must be at least the shortest span length (32)"),
        (["--min-anchor-gap", "-1"], "--min-anchor-gap -1: must be at least 0"),
        (["--temperature", "0"], "--temperature 0: must be above 0"),
        (["--contrastive-weight", "-1"], "--contrastive-weight -1: must be at least 0"),
        (["--mlm-weight", "-1"], "--mlm-weight -1: must be at least 0"),
        (
            ["--mlm-weight", "0", "--contrastive-weight", "0"],
            ("--mlm-weight 0: and --contrastive-weight 0 leave nothing to train"),
        ),
        (["--mlm-probability", "1"], "--mlm-probability 1: must be in [0, 1)"),
        (["--mlm-probability", "0"], "--mlm-probability 0: masks no token"),
        (["--mini-batch-size", "-1"], "--mini-batch-size -1: must be a whole number >= 1"),
        (["--mini-batch-size", "4", "--contrastive-weight", "0"], "--mini-batch-size 4: GradCache needs"),
        (["--mlm-head-warmup-steps", "-1"], "--mlm-head-warmup-steps -1: must be at least 0"),
        (["--mlm-head-learning-rate", "0"], "--mlm-head-learning-rate 0: must be above 0"),
        (["--matryoshka-weights", "1"], "--matryoshka-weights 1: give one weight per --matryoshka-dims size (0)"),
    ],
    "simcse": [
        (["--dataset", "missing.jsonl"], "--dataset missing.jsonl: no such file or folder"),
        (["--max-rows", "0"], "--max-rows 0: must be at least 1"),
        (["--max-sentences", "0"], "--max-sentences 0: must be at least 1"),
        (["--max-seq-length", "0"], "--max-seq-length 0: must be at least 1"),
        (["--temperature", "0"], "--temperature 0: must be above 0"),
        (["--matryoshka-dims", "384", "0"], "--matryoshka-dims 0: must be at least 1"),
    ],
    "tsdae": [
        (["--dataset", "missing.jsonl"], "--dataset missing.jsonl: no such file or folder"),
        (["--max-sentences", "0"], "--max-sentences 0: must be at least 1"),
        (["--max-seq-length", "0"], "--max-seq-length 0: must be at least 1"),
        (["--deletion-ratio", "1"], "--deletion-ratio 1: must be at least 0 and below 1"),
    ],
    "ct": [
        (["--dataset", "missing.jsonl"], "--dataset missing.jsonl: no such file or folder"),
        (["--max-sentences", "0"], "--max-sentences 0: must be at least 1"),
        (["--max-seq-length", "0"], "--max-seq-length 0: must be at least 1"),
    ],
    "supcon": [
        (["--dataset", "snli-dev+missing.tsv"], "--dataset missing.tsv: no such file or folder"),
        (["--max-rows", "0"], "--max-rows 0: must be at least 1"),
        (["--supcon-weight", "1.5"], "--supcon-weight 1.5: must be in [0, 1]"),
        (["--supcon-weight", "-0.1"], "--supcon-weight -0.1: must be in [0, 1]"),
        (["--temperature", "0"], "--temperature 0: must be above 0"),
        (["--positives", "0"], "--positives 0: must be 'all' or a positive integer"),
        (["--negatives", "0"], "--negatives 0: must be 'all' or a positive integer"),
        (["--classifier-hidden-size", "0"], "--classifier-hidden-size 0: must be at least 1"),
        (["--mini-batch-size", "-1"], "--mini-batch-size -1: must be a whole number >= 1"),
        (["--matryoshka-heads", "per-size"], "--matryoshka-heads per-size: needs --matryoshka-dims"),
        (
            ["--matryoshka-dims", "384", "64", "--matryoshka-weights", "1"],
            "--matryoshka-weights 1: give one weight per --matryoshka-dims size (2)",
        ),
    ],
    "multiview": [
        (["--views", "dep,tree"], "--views dep,tree: two of seq, dep, const"),
        (["--parsed", "missing.jsonl.gz"], "--parsed missing.jsonl.gz: no such file"),
        (
            ["--parsed", "base/parsed.jsonl.gz", "--output", "base", "--overwrite"],
            "--parsed base/parsed.jsonl.gz: lies inside --output base, which --overwrite removes",
        ),
        (["--dataset", "missing.jsonl"], "--dataset missing.jsonl: no such file"),
        (["--dataset", "blank.txt"], "--dataset blank.txt: no text in it"),
        (["--dataset", "notes.csv"], "--dataset notes.csv: unknown file type"),
        (["--max-rows", "-1"], "--max-rows -1: must be at least 0"),
        (["--max-sentences", "0"], "--max-sentences 0: must be at least 1"),
        (["--parser", "nope"], "--parser nope: unknown parser"),
        (["--parser", "spacy:not_a_spacy_model"], "--parser spacy:not_a_spacy_model: no spaCy model"),
        (["--parser", "stanza:missing"], "--parser stanza:missing: no such folder"),
        (["--parse-cache", "notes.csv"], "--parse-cache notes.csv: is a file"),
        (["--word-dim", "0"], "--word-dim 0: must be at least 1"),
        (["--dim", "0"], "--dim 0: must be at least 1"),
        (["--vocab-size", "0"], "--vocab-size 0: must be at least 1"),
        (["--word-vectors", "missing.txt"], "--word-vectors missing.txt: no such file"),
        (["--context-size", "0"], "--context-size 0: must be at least 1"),
        (["--batch-size", "1"], "--batch-size 1: a batch of one sentence holds no neighbour"),
        (["--eval-folds", "1"], "--eval-folds 1: must be at least 2"),
    ],
    "pretrain-mlm": [
        (["--dataset", "missing.jsonl"], "--dataset missing.jsonl: no such file or folder"),
        (["--max-rows", "0"], "--max-rows 0: must be at least 1"),
        (["--tokenizer", "empty"], "--tokenizer empty: a folder without a tokenizer"),
        (["--tokenizer", "nobody/not-cached"], "--tokenizer nobody/not-cached: not in the local Hugging Face cache"),
        (["--vocab-size", "0"], "--vocab-size 0: must be at least 1"),
        (["--max-seq-length", "2"], "--max-seq-length 2: must be at least 3"),
        (["--eval-blocks", "0"], "--eval-blocks 0: must be at least 1"),
        (["--hidden-size", "0"], "--hidden-size 0: must be at least 1"),
        (["--num-layers", "0"], "--num-layers 0: must be at least 1"),
        (["--num-heads", "0"], "--num-heads 0: must be at least 1"),
        (["--hidden-size", "30", "--num-heads", "4"], "--hidden-size 30: must be a multiple of --num-heads 4"),
        (["--batch-size", "0"], "--batch-size 0: must be at least 1"),
        (["--learning-rate", "0"], "--learning-rate 0: must be above 0"),
        (["--warmup-ratio", "1"], "--warmup-ratio 1: must be in [0, 1)"),
        (["--max-steps", "0"], "--max-steps 0: must be at least 1"),
        (["--max-minutes", "0"], "--max-minutes 0: must be above 0"),
        (["--mlm-probability", "0"], "--mlm-probability 0: must be above 0"),
        (["--mlm-probability", "1"], "--mlm-probability 1: must be in [0, 1)"),
        (["--dropout", "1"], "--dropout 1: must be in [0, 1)"),
        (["--save-steps", "0"], "--save-steps 0: must be at least 1"),
        (["--seed", "-1"], "--seed -1: must be an integer in [0, 2**32)"),
        (["--num-threads", "0"], "--num-threads 0: must be at least 1"),
        (["--resume-from-checkpoint"], "--resume-from-checkpoint: nothing to resume in --output out"),
        (
            ["--resume-from-checkpoint", "--output", "mlm-started", "--batch-size", "16"],
            "--resume-from-checkpoint: the run in mlm-started was started with other settings (--batch-size 32 -> 16)",
        ),
        (
            ["--resume-from-checkpoint", "mlm-started"],
            "--resume-from-checkpoint mlm-started: pretrain-mlm resumes the run in its --output (out)",
        ),
        (["--output", "mlm-finished"], "--output mlm-finished: holds a finished run (pretraining.json)"),
        (
            ["--output", "mlm-interrupted"],
            (
                "--output mlm-interrupted: holds an interrupted run (its last complete "
                "checkpoint is checkpoint-2): continue it with --resume-from-checkpoint, or add --overwrite"
            ),
        ),
    ],
    "active": [
        (["--dataset", "latin1.csv"], "--dataset latin1.csv, line 3: not UTF-8 text (byte 0xe9 at column 4)"),
        (["--dataset", "missing.csv"], "--dataset missing.csv: no such file or folder"),
        (["--label-names", "a"], "--label-names a: a classifier needs at least two labels"),
        (["--label-names", "a", "a", "b"], "--label-names a a b: repeats a"),
        (["--model", "empty"], "--model empty: a folder without a model"),
        (["--num-seeds", "0"], "--num-seeds 0: must be at least 1"),
        (["--initial", "0"], "--initial 0: must be in (0, 1]"),
        (["--budget", "2"], "--budget 2: must be at least --initial 0.01 and at most 1"),
        (["--step", "0"], "--step 0: must be above 0"),
        (["--oracle", "human", "--num-seeds", "3"], "--num-seeds 3: the human oracle labels for one arm"),
        (["--pool-size", "0"], "--pool-size 0: must be at least 1"),
        (["--test-size", "0"], "--test-size 0: must be at least 1"),
        (["--acquisition", "bald", "--bald-samples", "1"], "--bald-samples 1: must be at least 2"),
        (["--epochs", "0"], "--epochs 0: must be above 0"),
        (["--from-base-epochs", "0"], "--from-base-epochs 0: must be above 0"),
        (["--min-steps-per-class", "-1"], "--min-steps-per-class -1: must be at least 0"),
        (["--batch-size", "0"], "--batch-size 0: must be at least 1"),
        (["--learning-rate", "0"], "--learning-rate 0: must be above 0"),
        (["--head-learning-rate", "0"], "--head-learning-rate 0: must be above 0"),
        (["--supcon-weight", "2"], "--supcon-weight 2: must be in [0, 1]"),
        (["--temperature", "0"], "--temperature 0: must be above 0"),
        (["--dropout-rates", "0.1", "1"], "--dropout-rates 1: must be in [0, 1)"),
        (["--siamese-repeats", "0"], "--siamese-repeats 0: must be at least 1"),
        (["--max-seq-length", "0"], "--max-seq-length 0: must be at least 1"),
        (["--push-to-hub", "me/model"], "--push-to-hub publishes one model and this run has 3 arms"),
        (["--resume-from-checkpoint", "empty"], "--resume-from-checkpoint empty: no config.json there"),
        (
            ["--output", "active-run"],
            "--output active-run: holds an experiment with other settings (--num-seeds 5 -> 3)",
        ),
    ],
    "evaluate": [
        (["--eval-tasks", "nope"], "--eval-tasks nope: Unknown task(s) 'nope'"),
        (["--output", "empty"], "--output empty: is a folder"),
        (["--device", "gpu"], "--device gpu: use cpu, cuda, cuda:N"),
        (["--eval-folds", "1"], "--eval-folds 1: must be at least 2"),
        (["--num-threads", "0"], "--num-threads 0: must be at least 1"),
    ],
    "convert": [
        (["--max-seq-length", "0"], "--max-seq-length 0: must be at least 1"),
        (["--output", "finished"], "--output finished: exists and is not empty"),
    ],
    "parse": [
        (["--parser", "nope"], "--parser nope: unknown parser"),
        (["--batch-size", "0"], "--batch-size 0: must be at least 1"),
        (["--max-words", "0"], "--max-words 0: must be at least 1"),
        (["--max-rows", "0"], "--max-rows 0: must be at least 1"),
        (["--output", "out.jsonl"], "--output out.jsonl: the parsed output must be a .jsonl.gz file"),
        (["--output", "folder.jsonl.gz"], "--output folder.jsonl.gz: is a folder"),
    ],
    "push": [
        (["--repo-id", "no-slash"], "--repo-id no-slash: is not a Hub repository id"),
    ],
    "label": [
        (["--port", "70000"], "--port 70000: must be in [0, 65535]"),
        (["--grace-seconds", "-1"], "--grace-seconds -1: must be at least 0"),
        (["--estimate-folds", "1"], "--estimate-folds 1: must be 0 (no estimate) or at least 2"),
    ],
    "declutr-ablation": [
        (["--batch-size", "0"], "--batch-size 0: must be at least 1"),
        (["--max-span-length", "5"], "--max-span-length 5: must be at least the shortest span length (32)"),
        (
            ["--output", "ablation"],
            (
                "--output ablation: its variant declutr finished with other settings "
                "(--temperature 0.1 -> 0.05): add --overwrite"
            ),
        ),
    ],
    "supcon-sweep": [
        (["--supcon-weight", "0", "1.5"], "--supcon-weight 1.5: must be in [0, 1]"),
        (["--eval-tasks", "nope"], "--eval-tasks nope: Unknown task(s) 'nope'"),
        (["--temperature", "0"], "--temperature 0: must be above 0"),
    ],
    "chain": [
        (["--declutr-steps", "0"], "--declutr-steps 0: must be at least 1"),
        (["--supcon-weight", "2"], "--supcon-weight 2: must be in [0, 1]"),
        (["--supcon-steps", "0"], "--supcon-steps 0: use a positive number of steps, or -1 for one epoch"),
        (["--eval-max-rows", "0"], "--eval-max-rows 0: must be at least 1"),
        (["--mlm-probability", "1"], "--mlm-probability 1: must be in [0, 1)"),
        (["--batch-size", "0"], "--batch-size 0: must be at least 1"),
    ],
}

# What each command needs to be valid apart from the rule under test (a fake model folder: nothing loads).
VALID = {
    "declutr": ["--model", "base", "--output", "out"],
    "simcse": ["--model", "base", "--output", "out"],
    "tsdae": ["--model", "base", "--output", "out"],
    "ct": ["--model", "base", "--output", "out"],
    "supcon": ["--model", "base", "--output", "out"],
    "multiview": ["--output", "out"],
    "pretrain-mlm": ["--output", "out"],
    "active": ["--model", "base", "--output", "out"],
    "evaluate": ["base"],
    "convert": ["base", "--output", "out"],
    "parse": ["--dataset", "sentences.txt", "--output", "out.jsonl.gz"],
    "push": ["finished", "--repo-id", "me/model"],
    "label": ["human-run"],
    "declutr-ablation": ["--model", "base", "--output", "out"],
    "supcon-sweep": ["--model", "base", "--output", "out"],
    "chain": ["--model", "base", "--output", "out"],
}

# Rules about a positional argument (or parse's --dataset and --output) replace the valid one.
POSITIONAL_RULES = [
    ("evaluate", ["empty"], "MODEL empty: a folder without a model"),
    ("evaluate", ["nobody/not-cached"], "MODEL nobody/not-cached: not in the local Hugging Face cache"),
    ("convert", ["empty", "--output", "out"], "SOURCE empty: has no config.json"),
    ("convert", ["nobody/not-cached", "--output", "out"], "SOURCE nobody/not-cached: not in the local Hugging Face"),
    ("parse", ["--dataset", "missing.jsonl", "--output", "out.jsonl.gz"], "--dataset missing.jsonl: no such file"),
    ("parse", ["--dataset", "blank.txt", "--output", "out.jsonl.gz"], "--dataset blank.txt: no text in it"),
    ("parse", ["--dataset", "notes.csv", "--output", "out.jsonl.gz"], "--dataset notes.csv: unknown file type"),
    ("push", ["missing", "--repo-id", "me/model"], "RUN_DIR missing: no such folder"),
    ("push", ["unfinished", "--repo-id", "me/model"], "RUN_DIR unfinished: has no results.json"),
    ("label", ["empty"], "RUN_DIR empty: has no config.json: start the run with `st-contrastive active"),
    ("label", ["active-run"], "RUN_DIR active-run: is a run with the simulated oracle"),
    ("declutr-ablation", ["--model", "empty", "--output", "out"], "--model empty: a folder without a model"),
    ("supcon-sweep", ["--model", "empty", "--output", "out"], "--model empty: a folder without a model"),
    ("chain", ["--model", "empty", "--output", "out"], "--model empty: a folder without a model"),
]


def cases() -> list[tuple[str, list[str], str]]:
    table = [
        (command, VALID[command] + args, expected) for command in TRAINING_COMMANDS for args, expected in TRAINING_RULES
    ]
    table += [
        (command, VALID[command] + args, expected) for command in MODEL_COMMANDS for args, expected in MODEL_RULES
    ]
    table += [
        (command, VALID[command] + args, expected)
        for command, rules in COMMAND_RULES.items()
        for args, expected in rules
    ]
    table += POSITIONAL_RULES
    return table


CASES = cases()
IDS = [f"{command} {' '.join(argv)}" for command, argv, _ in CASES]

HARNESS = """
import contextlib, io, json, os, signal, sys, time
from st_contrastive.commands.cli import main

def files():
    return sorted(os.path.join(root, name) for root, folders, names in os.walk(".") for name in names + folders)

def timeout(signum, frame):
    raise TimeoutError("no answer within 20 s")

signal.signal(signal.SIGALRM, timeout)
results = []
for argv in json.loads(sys.stdin.read()):
    before, torch_before, err = files(), "torch" in sys.modules, io.StringIO()
    start, code = time.perf_counter(), None
    signal.alarm(20)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            main(argv)
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    except BaseException as error:
        code = repr(error)
    signal.alarm(0)
    results.append({"code": code, "stderr": err.getvalue(), "seconds": time.perf_counter() - start,
                    "imported_torch": "torch" in sys.modules and not torch_before,
                    "written": sorted(set(files()) - set(before))})
print(json.dumps(results))
"""


def make_inputs(folder: Path) -> None:
    """The files and folders the table refers to; no model in them, nothing that loads."""
    for model in ("base", "base/inner"):
        (folder / model).mkdir()
        (folder / model / "config.json").write_text(json.dumps({"num_hidden_layers": 2}))
    (folder / "base" / "parsed.jsonl.gz").write_bytes(b"")
    (folder / "base" / "results.json").write_text("{}")  # a finished run, which --overwrite would remove
    (folder / "empty").mkdir()
    (folder / "folder.jsonl.gz").mkdir()
    (folder / "finished").mkdir()
    for name in ("results.json", "modules.json"):
        (folder / "finished" / name).write_text("{}")
    (folder / "unfinished").mkdir()
    (folder / "unfinished" / "modules.json").write_text("{}")
    complete = folder / "interrupted" / "checkpoints" / "checkpoint-2"
    complete.mkdir(parents=True)
    (complete / "trainer_state.json").write_text("{}")
    torn = folder / "torn" / "checkpoints" / "checkpoint-2"
    torn.mkdir(parents=True)
    (torn / "trainer_state.json").write_text("{}")
    (torn / "optimizer.pt").write_bytes(b"PK\x03\x04 cut short")
    (folder / "sentences.txt").write_text("The cat sat on the mat.\n")
    (folder / "blank.txt").write_text("\n  \n")
    (folder / "notes.csv").write_text("text\n")
    (folder / "latin1.jsonl").write_bytes(b'{"text": "ok"}\n{"text": "caf\xe9"}\n')  # saved as Latin-1
    (folder / "body.jsonl").write_text('{"body": "x"}\n')
    (folder / "nothing.jsonl").write_text("\n")
    (folder / "latin1.csv").write_bytes(b"text,label\nok,a\ncaf\xe9,b\n")
    (folder / "mlm-finished").mkdir()
    (folder / "mlm-finished" / "pretraining.json").write_text("{}")
    (folder / "mlm-started").mkdir()
    (folder / "mlm-started" / "pretraining_settings.json").write_text(json.dumps({"batch_size": 32, "seed": 0}))
    (folder / "mlm-interrupted" / "checkpoints" / "checkpoint-2").mkdir(parents=True)
    (folder / "mlm-interrupted" / "checkpoints" / "checkpoint-2" / "trainer_state.json").write_text("{}")
    (folder / "active-run").mkdir()
    (folder / "active-run" / "config.json").write_text(
        json.dumps({"num_seeds": 5, "output": "active-run", "model": "base"})
    )
    (folder / "human-run").mkdir()
    (folder / "human-run" / "config.json").write_text(json.dumps({"oracle": "human", "output": "human-run"}))
    variant = folder / "ablation" / "declutr"
    variant.mkdir(parents=True)
    (variant / "results.json").write_text("{}")
    (variant / "run_settings.json").write_text(json.dumps({"temperature": 0.1}))


@pytest.fixture(scope="module")
def answers(tmp_path_factory) -> dict[str, dict]:
    folder = tmp_path_factory.mktemp("settings")
    make_inputs(folder)
    argvs = [[command, *argv] for command, argv, _ in CASES]
    done = subprocess.run(
        [sys.executable, "-c", HARNESS],
        input=json.dumps(argvs),
        capture_output=True,
        text=True,
        cwd=folder,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(zip(IDS, json.loads(done.stdout.splitlines()[-1])))


@pytest.mark.parametrize(("command", "argv", "expected"), CASES, ids=IDS)
def test_a_bad_setting_is_named_in_one_line_before_anything_loads(answers, command, argv, expected):
    answer = answers[f"{command} {' '.join(argv)}"]
    lines = answer["stderr"].splitlines()
    assert answer["code"] == 2, answer
    assert lines == [f"st-contrastive {command}: error: {lines[0].split(': error: ', 1)[-1]}"], answer["stderr"]
    assert lines[0].startswith(f"st-contrastive {command}: error: {expected}"), answer["stderr"]
    # Before anything heavy loads: torch is never imported (no timed assert: a loaded machine would make it flaky).
    assert not answer["imported_torch"], answer
    assert answer["written"] == [], answer["written"]  # no output folder, no file


def test_several_bad_settings_are_all_named(tmp_path):
    """One run names every bad setting it checks from the options, a line each, and exits like argparse: the real
    process, its status. (A setting the library's dataclass refuses, such as --batch-size 0, stops the parse at the
    first, as transformers' TrainingArguments does.)"""
    make_inputs(tmp_path)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "st_contrastive.commands.cli",
            "declutr",
            "--model",
            "empty",
            "--max-span-length",
            "5",
            "--temperature",
            "0",
            "--output",
            "out",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [
        (
            "st-contrastive declutr: error: --model empty: a folder without a model (none of modules.json, config.json); "
            "pass the folder a model was saved to, or a Hugging Face Hub id"
        ),
        "st-contrastive declutr: error: --max-span-length 5: must be at least the shortest span length (32)",
        "st-contrastive declutr: error: --temperature 0: must be above 0",
    ]
    assert not (tmp_path / "out").exists()


def test_the_python_api_raises_the_same_rule_naming_the_argument():
    """Python callers meet the same rules as the command line, named as the arguments they pass."""
    from st_contrastive.arguments import ArgumentError
    from st_contrastive.config.training import TrainSettings
    from st_contrastive.data.span_sampler import SpanSampler

    with pytest.raises(ArgumentError, match=r"^batch_size=0: must be at least 1$"):
        TrainSettings(batch_size=0)
    with pytest.raises(ArgumentError, match=r"^max_length=5: must be at least the shortest span length \(32\)$"):
        SpanSampler(max_length=5)


def test_a_models_file_is_found_in_its_folder_or_the_hub_cache_and_nowhere_else(tmp_path, monkeypatch):
    """model_file: a folder's own file; a Hub id's file from the local cache, laid out as huggingface_hub writes a
    download; None where neither has it, without the network."""
    from huggingface_hub import constants

    from st_contrastive.commands.input_checks import is_sentence_encoder, model_file

    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"num_hidden_layers": 4}))
    assert model_file(str(folder), "config.json") == folder / "config.json"
    assert model_file(str(folder), "modules.json") is None and not is_sentence_encoder(str(folder))

    cache = tmp_path / "hub"
    repo = cache / "models--someone--tiny"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("0123abcd")
    (repo / "snapshots" / "0123abcd").mkdir(parents=True)
    (repo / "snapshots" / "0123abcd" / "modules.json").write_text("[]")
    (repo / "snapshots" / "0123abcd" / "config.json").write_text(json.dumps({"num_hidden_layers": "six"}))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    assert model_file("someone/tiny", "modules.json") == repo / "snapshots" / "0123abcd" / "modules.json"
    assert is_sentence_encoder("someone/tiny")
    assert model_file("someone/other", "config.json") is None
