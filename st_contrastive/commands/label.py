"""``st-contrastive label RUN_DIR``: label an active-learning run in the browser, one text at a time.

    st-contrastive active --dataset my_texts.csv --label-names billing bug question --oracle human --output runs/mine
    st-contrastive label runs/mine            # then open http://127.0.0.1:8000

The page shows each queried text with the current model's guess, label buttons (keys 1-9), undo (u) and skip (s).
Each label is written to the round's queries file at once; when the round is labelled, the next one trains in the
background (the same round as `st-contrastive active --resume-from-checkpoint`) and its queries appear. At the
budget the page offers every label as a CSV and the commands to evaluate and publish the model. The queries file
stays the record: a spreadsheet and `active --resume-from-checkpoint` work on the same run.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from st_contrastive.commands import options
from st_contrastive.commands.options import option

LOCALHOST = "127.0.0.1"


@dataclass
class LabelConfig:
    """``st-contrastive label``'s options, each field the option of the same name."""

    run_dir: str = option(
        positional=True, metavar="RUN_DIR", help="the --output folder of `st-contrastive active --oracle human`"
    )
    host: str = option(
        LOCALHOST, help="address to serve on; any other than 127.0.0.1 requires the access token the server prints"
    )
    port: int = option(8000, help="port to serve on")
    annotator: str | None = option(None, help="who labels, recorded with each label (default: the login name)")


def build_parser() -> argparse.ArgumentParser:
    return options.build_parser(LabelConfig, "st-contrastive label", __doc__)


def check_inputs(command: LabelConfig) -> None:
    """RUN_DIR a human-oracle run and a usable port, before the model and data load."""
    import json
    from pathlib import Path

    from st_contrastive.commands.input_checks import SettingChecks

    checks = SettingChecks()
    config = Path(command.run_dir) / "config.json"
    if not config.is_file():
        checks.add(
            "RUN_DIR",
            command.run_dir,
            "has no config.json: start the run with `st-contrastive active "
            f"--dataset FILE --oracle human --output {command.run_dir}`",
        )
    elif json.loads(config.read_text()).get("oracle") != "human":
        checks.add(
            "RUN_DIR",
            command.run_dir,
            "is a run with the simulated oracle: the page labels runs started with --oracle human",
        )
    checks.within("--port", command.port, 0, 65535, high_included=True)
    checks.done()


def main(argv: list[str] | None = None) -> None:
    command = options.config_from_args(LabelConfig, build_parser().parse_args(argv))
    check_inputs(command)
    from st_contrastive.active.labelling import LabellingSession
    from st_contrastive.active.labelling_app import create_app, new_token
    from st_contrastive.extras import require_extra

    uvicorn = require_extra("uvicorn", "active")
    session = LabellingSession(command.run_dir, command.annotator)
    token = None if command.host == LOCALHOST else new_token()
    host = f"[{command.host}]" if ":" in command.host else command.host
    url = f"http://{host}:{command.port}/" + (f"?token={token}" if token else "")
    print(
        f"Labelling {command.run_dir} as {session.annotator}: open {url}  (Ctrl-C stops; the labels are saved as "
        "they are given)",
        flush=True,
    )
    uvicorn.run(create_app(session, token), host=command.host, port=command.port, log_level="warning")


if __name__ == "__main__":
    main()
