"""``st-contrastive label-studio-export RUN_DIR --output FILE``: an active-learning run's texts as a Label Studio
import file, with the labels given so far as annotations and the latest round model's guesses as predictions, and
the labelling interface beside it.

    st-contrastive active --dataset my_texts.csv --oracle human --output runs/mine
    st-contrastive label-studio-export runs/mine --output runs/mine-tasks.json

Import the tasks into a Label Studio project whose labelling interface is the ``.label-config.xml`` file written
beside them (Settings > Labeling Interface > Code); each task's ``data.row`` is its row in the run. The export reads
the run folder only, so it can run while the run is labelled elsewhere.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from st_contrastive.commands import options
from st_contrastive.commands import shared_options as shared
from st_contrastive.commands.options import option
from st_contrastive.data.label_studio import FROM_NAME, TO_NAME


@dataclass
class LabelStudioExportConfig:
    """``st-contrastive label-studio-export``'s options, each field the option of the same name."""

    run_dir: str = shared.human_run()
    output: str = option(help="the Label Studio tasks file to write (.json); its labelling interface goes beside it")
    from_name: str = option(FROM_NAME, help="the name of the labelling interface's <Choices> tag")
    to_name: str = option(TO_NAME, help="the name of the labelling interface's <Text> tag")
    predictions: bool = option(
        False,
        help="add the latest round model's label for every row, its probability as the score: for a project without "
        "`label-studio-backend` (Label Studio would keep to these imported predictions and not ask the backend)",
    )


def build_parser() -> argparse.ArgumentParser:
    return options.build_parser(LabelStudioExportConfig, "st-contrastive label-studio-export", __doc__)


def check_inputs(command: LabelStudioExportConfig) -> None:
    """RUN_DIR a human-oracle run, --output a .json file's place and the tag names set, before anything loads."""
    import json

    from st_contrastive.commands.input_checks import SettingChecks

    checks = SettingChecks()
    config = Path(command.run_dir) / "config.json"
    if not config.is_file():
        checks.add(
            "RUN_DIR", command.run_dir, "has no config.json: pass the --output folder of `st-contrastive active`"
        )
    elif json.loads(config.read_text()).get("oracle") != "human":
        checks.add(
            "RUN_DIR", command.run_dir, "is a run with the simulated oracle: export runs made with --oracle human"
        )
    output = Path(command.output).expanduser()
    if output.suffix.lower() != ".json":
        checks.add("--output", command.output, "name a .json file (Label Studio imports tasks as JSON)")
    elif output.is_dir():
        checks.add("--output", command.output, "is a folder: name a .json file")
    for flag, name in (("--from-name", command.from_name), ("--to-name", command.to_name)):
        if not name.strip():
            checks.add(flag, name, "name the tag of the labelling interface")
    checks.done()


def main(argv: list[str] | None = None) -> Path:
    command = options.config_from_args(LabelStudioExportConfig, build_parser().parse_args(argv))
    check_inputs(command)
    from st_contrastive.active.label_studio_export import export_run, interface_path

    output = Path(command.output).expanduser()
    output.parent.mkdir(parents=True, exist_ok=True)
    tasks = export_run(
        command.run_dir, output, from_name=command.from_name, to_name=command.to_name, predictions=command.predictions
    )
    print(f"{tasks}: the run's texts as Label Studio tasks\n{interface_path(tasks)}: their labelling interface")
    return tasks


if __name__ == "__main__":
    main()
