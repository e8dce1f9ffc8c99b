"""A recipe's ``--output`` folder: never overwritten silently, resumed only with the settings it was started with.

A run folder holds the model, ``results.json`` once the run finished, the trainer checkpoints under ``checkpoints/``
and ``run_settings.json`` (the recipe's settings, written when training starts). A finished or interrupted run is
refused as an output unless the command resumes it or says ``--overwrite``, which removes the old run, side folders
(``hub-upload/``, ``masked-lm/``...) included. Nothing here imports torch.
"""

from __future__ import annotations

import json
import logging
import shutil
from dataclasses import asdict
from pathlib import Path

from st_contrastive.checkpoints import (
    CHECKPOINTS_FOLDER,
    CheckpointError,
    checkpoints_of,
    latest_complete_checkpoint,
    resolve_resume_point,
    run_folder_of,
)
from st_contrastive.commands.input_checks import SettingChecks, shown
from st_contrastive.commands.options import config_from_args
from st_contrastive.run_settings import changed_settings

logger = logging.getLogger(__name__)

RESULTS_NAME = "results.json"
SETTINGS_NAME = "run_settings.json"
# Settings a resumed run may change: more steps, other checkpoint and evaluation intervals, other evaluation tasks.
# Each change is warned about; any other change is refused (the data, the model or the objective would differ).
CHANGEABLE_ON_RESUME = {
    "training.max_steps",
    "training.epochs",
    "training.save_steps",
    "training.eval_steps",
    "eval_tasks",
    "eval_batch_size",
    "eval_max_rows",
    "eval_folds",
    "skip_before",
    "save_masked_lm",
    "mlm_head_warmup_steps",
    "mlm_head_learning_rate",
    "parse_cache",
}
# Where a run is, what it is called and how it is published are not settings of the training; the per-parameter
# learning rates are derived from options that are compared (supcon's --head-learning-rate).
NOT_COMPARED = {
    "output",
    "name",
    "push_to_hub",
    "training.output_dir",
    "training.resume_from_checkpoint",
    "training.overwrite",
    "training.learning_rate_mapping",
}
OPTION_NAMES = {"attention": "--no-attention", "objectives": "--objective", "acquisitions": "--acquisition"}


def option_name(key: str) -> str:
    """The command-line option of a flattened settings key (``training.batch_size`` -> ``--batch-size``)."""
    field = key.rsplit(".", 1)[-1]
    return OPTION_NAMES.get(field, "--" + field.replace("_", "-"))


def setting_changes(saved: dict, current: dict) -> tuple[list[str], list[str]]:
    """(refused, warned) changes between a run's saved settings and the current ones, as ``--option OLD -> NEW``."""
    refused, warned = [], []
    for key, (old, new) in changed_settings(saved, current, NOT_COMPARED).items():
        change = f"{option_name(key)} {shown(old)} -> {shown(new)}"
        (warned if key in CHANGEABLE_ON_RESUME else refused).append(change)
    return refused, warned


def saved_settings(run: Path | None) -> dict | None:
    """The settings a run recorded when it started (None when it recorded none, or they are unreadable)."""
    try:
        return json.loads((run / SETTINGS_NAME).read_text()) if run is not None else None
    except (OSError, ValueError):
        return None


def record_settings(output: str | Path, settings: dict) -> None:
    """Write the run's settings where a resume will compare them (when training starts)."""
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    (output / SETTINGS_NAME).write_text(json.dumps(settings, indent=2, default=str) + "\n")


def is_finished(output: Path, marker: str = RESULTS_NAME) -> bool:
    return (output / marker).is_file()


def check_resume(checks: SettingChecks, resume_from: str | None, settings: dict) -> Path | None:
    """``--resume-from-checkpoint``: a complete checkpoint (or a run folder that has one), of a run started with
    the same settings; returns the checkpoint, or None after recording the problem."""
    if resume_from is None:
        return None
    try:
        checkpoint = resolve_resume_point(resume_from)
    except CheckpointError as error:
        checks.add("", None, str(error))
        return None
    run = run_folder_of(checkpoint)  # RUN/checkpoints/checkpoint-N: the settings are RUN's
    saved = saved_settings(run)
    if saved is not None:
        refused, warned = setting_changes(saved, settings)
        if refused:
            checks.add(
                "--resume-from-checkpoint",
                resume_from,
                f"the run was started with other settings "
                f"({'; '.join(refused)}): pass the original options, or start a new run in another --output",
            )
        for change in warned:
            logger.warning("Resuming %s with %s", run, change)
    return checkpoint


def check_run_folder(checks: SettingChecks, config, output: Path | None, *, resume: bool = True) -> None:
    """The resume point (unless ``resume`` is False) and the output folder (where known: declutr's default name
    needs the model's depth) of a training recipe's config (its ``training`` holds the options)."""
    training = config.training
    if resume:
        check_resume(checks, training.resume_from_checkpoint, asdict(config))
    if output is None:
        return
    check_output(
        checks,
        output,
        overwrite=training.overwrite,
        resuming=bool(training.resume_from_checkpoint),
        inputs=input_paths(config),
    )


def input_paths(config) -> dict[str, str]:
    """The config's settings that name an existing file or folder (a model, a corpus...), by option."""
    return {
        option_name(key): value
        for key, value in asdict(config).items()
        if isinstance(value, str) and key not in ("output", "name") and Path(value).exists()
    }


def check_output(
    checks: SettingChecks,
    output: str | Path,
    *,
    overwrite: bool,
    resuming: bool,
    inputs: dict[str, str | None] | None = None,
    marker: str = RESULTS_NAME,
    resume_how: str = "--resume-from-checkpoint OUTPUT",
) -> None:
    """A finished run in ``output`` (its ``marker`` file) or an interrupted one (checkpoints, no marker) is refused
    unless the command resumes it or says ``--overwrite``. ``inputs`` (option -> path) must not lie inside an output
    that ``--overwrite`` would remove."""
    output = Path(output)
    if overwrite:
        if resuming:
            checks.add(
                "--overwrite", None, "would remove the run being resumed: drop one of --overwrite and the resume option"
            )
        for option, value in (inputs or {}).items():
            if value and holds_run(output, marker) and _inside(Path(value), output):
                checks.add(
                    option,
                    value,
                    f"lies inside --output {output}, which --overwrite removes: write the new run to another --output",
                )
        return
    if resuming or not output.is_dir():
        return
    how = resume_how.replace("OUTPUT", str(output))
    if is_finished(output, marker):
        checks.add(
            "--output",
            output,
            f"holds a finished run ({marker}): add --overwrite to replace it, or choose another --output",
        )
    elif checkpoints_of(output / CHECKPOINTS_FOLDER):
        latest = latest_complete_checkpoint(output)
        state = f"its last complete checkpoint is {latest.name}" if latest else "no checkpoint of it is complete"
        checks.add(
            "--output",
            output,
            f"holds an interrupted run ({state}): continue it with {how}, or add --overwrite to start over",
        )


def _inside(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except OSError:
        return False


def holds_run(output: Path, marker: str = RESULTS_NAME) -> bool:
    """Whether ``output`` holds a run (finished, or started) that ``--overwrite`` removes; any other folder is left
    alone."""
    return output.is_dir() and any((output / name).exists() for name in (marker, CHECKPOINTS_FOLDER, SETTINGS_NAME))


def clear_for_overwrite(output: str | Path, overwrite: bool, marker: str = RESULTS_NAME) -> None:
    """With ``--overwrite``, remove the old run in ``output`` (after the checks passed, before anything loads); under
    torchrun / accelerate rank 0 does it."""
    from st_contrastive.distributed import is_main_process

    output = Path(output)
    if overwrite and holds_run(output, marker) and is_main_process():
        logger.warning("--overwrite: removing the previous run in %s", output)
        shutil.rmtree(output)


def continue_or_restart(training, output: str | Path, *, retrain: bool = False):
    """A comparison's training settings for one of its runs in ``output`` (that it did not reuse): resumed from the
    run's last complete checkpoint when it was interrupted, else started over (an old run there removed)."""
    from dataclasses import replace

    output = Path(output)
    if not retrain and not is_finished(output) and latest_complete_checkpoint(output) is not None:
        return replace(training, resume_from_checkpoint=str(output), overwrite=False)
    return replace(training, resume_from_checkpoint=None, overwrite=True)


def comparison_arguments(parser, config_class: type, argv, refused=("--resume-from-checkpoint", "--overwrite")):
    """A comparison's own options (an instance of ``config_class``) and the options it passes on to each of its
    runs. It publishes none of them and decides per run whether it is reused, resumed or retrained: --push-to-hub and
    the ``refused`` options would apply to all of its runs at once, so they stop here, before any work."""
    parsed, passed = parser.parse_known_args(argv)
    own = config_from_args(config_class, parsed)
    given = {option.split("=")[0] for option in passed}
    if "--push-to-hub" in given:
        parser.error(
            "--push-to-hub publishes one run, and this command trains several to compare them: publish "
            "the one you pick with `st-contrastive push OUTPUT/RUN --repo-id USER/NAME`"
        )
    if given & set(refused):
        parser.error(
            f"{', '.join(sorted(given & set(refused)))}: this command reuses its finished runs and resumes "
            "interrupted ones on a rerun; choose another --output to start afresh"
        )
    return own, passed
