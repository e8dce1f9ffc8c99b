"""Ctrl-C during training: one line saying the step and the command that resumes, exit status 130, a complete
checkpoint at that step; the run resumes from its folder and finishes. A resume with other settings is refused
(naming them), with more steps it is warned about and allowed."""

from __future__ import annotations

import json
import logging
import re
import shlex
import subprocess
import sys
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from st_contrastive.checkpoints import torn_file
from st_contrastive.commands.cli import main as cli_main
from st_contrastive.commands.input_checks import SettingChecks
from st_contrastive.commands.run_folder import check_resume
from st_contrastive.commands.supcon import SupConNLIConfig

STEPS = 20


def supcon_argv(model: str, output: str) -> list[str]:
    return [
        "supcon",
        "--model",
        model,
        "--dataset",
        "snli-dev",
        "--max-rows",
        "256",
        "--batch-size",
        "16",
        "--max-steps",
        str(STEPS),
        "--save-steps",
        "10",
        "--eval-tasks",
        "--output",
        output,
        "--seed",
        "0",
    ]


# The command, with SIGINT (what a terminal's Ctrl-C sends) delivered to the process at the end of step 5. Sent from
# outside once a step showed, it raced the run: under load the 60 steps could end before it arrived (exit 0).
_INTERRUPTED_AT_STEP_5 = """
import os, signal, sys
# As at a terminal: a process started in the background by a shell without job control inherits SIGINT ignored
# (as CI may start this suite), and the command then rightly leaves Ctrl-C alone.
signal.signal(signal.SIGINT, signal.default_int_handler)
from transformers import TrainerCallback
from st_contrastive.training import trainer

class CtrlC(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == 5:
            os.kill(os.getpid(), signal.SIGINT)

start = trainer.ContrastiveTrainer.__init__
def init(self, *args, **kwargs):
    start(self, *args, **kwargs)
    self.add_callback(CtrlC())
trainer.ContrastiveTrainer.__init__ = init
from st_contrastive.commands.cli import main
main(sys.argv[1:])
"""


def run_until_interrupted(argv: list[str], cwd: Path) -> tuple[int, str]:
    """Run the command with a Ctrl-C at the end of its fifth step; returns its exit status and standard error."""
    done = subprocess.run(
        [sys.executable, "-c", _INTERRUPTED_AT_STEP_5, *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    return done.returncode, done.stderr


def test_ctrl_c_saves_a_checkpoint_and_the_run_resumes_from_its_folder(tmp_path, tiny_mlm_dir, monkeypatch):
    code, stderr = run_until_interrupted(supcon_argv(tiny_mlm_dir, "run"), tmp_path)
    last = stderr.strip().splitlines()[-1]
    assert code == 130, stderr[-3000:]
    assert "Traceback" not in stderr
    match = re.fullmatch(r"st-contrastive supcon: interrupted at step (\d+); resume with (.+)", last)
    assert match, last
    step, command = int(match.group(1)), shlex.split(match.group(2))
    assert 1 <= step < STEPS
    assert command == ["st-contrastive", *supcon_argv(tiny_mlm_dir, "run"), "--resume-from-checkpoint", "run"]
    checkpoint = tmp_path / "run" / "checkpoints" / f"checkpoint-{step}"
    assert torn_file(checkpoint) is None  # saved at the step it stopped at, manifest and all
    assert not (tmp_path / "run" / "results.json").exists()

    # The one-line command resumes from the run folder and finishes the run (in this process: the interrupted one
    # had to be a process of its own to get the signal).
    monkeypatch.chdir(tmp_path)
    cli_main(command[1:])
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["train"]["steps"] == STEPS
    state = json.loads((tmp_path / "run" / "checkpoints" / f"checkpoint-{STEPS}" / "trainer_state.json").read_text())
    # The history of the steps before the interruption came back with the checkpoint: every step logged once.
    assert [row["step"] for row in state["log_history"] if "loss" in row] == list(range(1, STEPS + 1))


def test_a_resume_with_other_settings_is_refused_and_more_steps_warned(tmp_path, caplog):
    run = tmp_path / "run"
    checkpoint = run / "checkpoints" / "checkpoint-5"
    checkpoint.mkdir(parents=True)
    (checkpoint / "trainer_state.json").write_text("{}")
    config = SupConNLIConfig(model="base", output=str(run))
    (run / "run_settings.json").write_text(json.dumps(asdict(config)))

    checks = SettingChecks()
    other = replace(config, temperature=0.5, training=replace(config.training, batch_size=8))
    assert check_resume(checks, str(run), asdict(other)) == checkpoint
    assert checks.problems == [
        (
            f"--resume-from-checkpoint {run}: the run was started with other settings "
            "(--temperature 1 -> 0.5; --batch-size 64 -> 8): pass the original options, or start "
            "a new run in another --output"
        )
    ]

    checks = SettingChecks()
    longer = replace(config, training=replace(config.training, max_steps=500, resume_from_checkpoint=str(run)))
    with caplog.at_level(logging.WARNING):
        assert check_resume(checks, str(checkpoint), asdict(longer)) == checkpoint
    assert checks.problems == []
    assert f"Resuming {run} with --max-steps -1 -> 500" in caplog.text


@pytest.mark.parametrize("second", [False, True], ids=["first Ctrl-C", "second Ctrl-C"])
def test_the_interrupt_line_names_the_resume_point(second):
    """A second Ctrl-C stops mid-step: the line then says from which earlier step the resume starts."""
    from st_contrastive.commands.cli import interrupted_line

    class Interrupted(KeyboardInterrupt):
        step, run = 7, Path("runs/x")
        checkpoint = Path("runs/x/checkpoints/checkpoint-5" if second else "runs/x/checkpoints/checkpoint-7")
        resume_step = 5 if second else 7

    line = interrupted_line(
        "declutr", ["--max-steps", "9", "--overwrite", "--resume-from-checkpoint", "old"], Interrupted()
    )
    at = "7 (the last checkpoint is of step 5)" if second else "7"
    assert line == (
        f"st-contrastive declutr: interrupted at step {at}; resume with st-contrastive declutr "
        "--max-steps 9 --resume-from-checkpoint runs/x"
    )
    assert interrupted_line("supcon-sweep", ["--output", "s", "--rerun"], Interrupted()).endswith(
        "resume with rerun st-contrastive supcon-sweep --output s (finished runs are reused)"
    )
    assert interrupted_line("active", ["--output", "al"], Interrupted()).endswith(
        "resume with st-contrastive active --resume-from-checkpoint al"
    )
    # pretrain-mlm resumes in its --output: the bare flag, given once.
    assert interrupted_line("pretrain-mlm", ["--resume-from-checkpoint", "--output", "m"], Interrupted()).endswith(
        "resume with st-contrastive pretrain-mlm --output m --resume-from-checkpoint"
    )
    assert interrupted_line("evaluate", [], KeyboardInterrupt()) == "st-contrastive evaluate: interrupted"
