"""``st-contrastive label-studio-backend RUN_DIR``: label an active-learning run in Label Studio, with SCALe as the
project's model (its machine-learning backend).

    st-contrastive active --dataset my_texts.csv --label-names billing bug question --oracle human --output runs/mine
    st-contrastive label-studio-export runs/mine           # the run's texts as Label Studio tasks, and its interface
    st-contrastive label-studio-backend runs/mine          # then paste the URL it prints into Label Studio

Start Label Studio with ML_BLOCK_LOCAL_IP=false SSRF_PROTECTION_ENABLED=false
ff_front_dev_1682_model_version_dropdown_070622_short=true in its environment (a backend on this machine, its webhook,
and scores that follow the model's rounds). In the project, Settings > Model > Connect Model: the URL printed, token
included; Settings > Annotation > Prelabeling: that model. In the Data Manager, "Retrieve Predictions" on the tasks, then sort by "Prediction score" ascending: the
texts SCALe queries come first. Each label given in Label Studio is written to the round's queries file at once;
when the round is labelled (and its grace period is over, or "Start Training" is pressed), the next round trains in
the background and the model version moves on: retrieve the predictions again for the next queries. The token is
kept in RUN_DIR, so a restarted backend serves the URL Label Studio already has.
"""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from st_contrastive.active.labelling_settings import LabellingSettings
from st_contrastive.commands import options
from st_contrastive.commands import shared_options as shared
from st_contrastive.commands.options import option

# The token, when no --token is given: the environment's, else the one saved in the run folder at the first start.
TOKEN_VARIABLE = "ST_CONTRASTIVE_BACKEND_TOKEN"
TOKEN_FILE = "label-studio-backend.token"
# The token is a segment of the URL's path: letters, digits, '-' and '_' (as labelling_app.new_token makes), and long.
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{16,}")
TOKEN_RULE = "must be at least 16 letters, digits, '-' or '_' (it is a segment of the URL's path)"


@dataclass
class LabelStudioBackendConfig:
    """``st-contrastive label-studio-backend``'s options, each field the option of the same name."""

    run_dir: str = shared.human_run()
    host: str = shared.serving_host("for a Label Studio elsewhere")
    port: int = option(9090, help="port to serve on (0: a free one, printed)")
    allow_host: list[str] = option(
        [],
        metavar="NAME",
        help="another name Label Studio reaches the backend by (its Host header), e.g. host.docker.internal for a "
        "Label Studio in Docker; this machine's loopback names are always allowed",
    )
    token: str | None = option(
        None,
        help=f"the access token in the URL (default: ${TOKEN_VARIABLE}, else the one kept in RUN_DIR/{TOKEN_FILE}, "
        "made at the first start)",
    )
    rounds: LabellingSettings = field(default_factory=LabellingSettings, metadata={"group": "rounds"})


def build_parser() -> argparse.ArgumentParser:
    return options.build_parser(LabelStudioBackendConfig, "st-contrastive label-studio-backend", __doc__)


def check_inputs(command: LabelStudioBackendConfig) -> None:
    """RUN_DIR a human-oracle run, a usable port and token, before the model and data load."""
    from st_contrastive.commands.input_checks import SettingChecks
    from st_contrastive.commands.label import LabelConfig
    from st_contrastive.commands.label import check_inputs as check_label_inputs

    check_label_inputs(LabelConfig(run_dir=command.run_dir, port=command.port))
    checks = SettingChecks()
    for name, token in (("--token", command.token), (f"${TOKEN_VARIABLE}", os.environ.get(TOKEN_VARIABLE))):
        if token and not TOKEN_PATTERN.fullmatch(token):
            checks.add(name, None, TOKEN_RULE)  # a secret: not echoed
    checks.done()


def access_token(command: LabelStudioBackendConfig) -> str:
    """The token: --token, else the environment's, else the run folder's (written, readable by its owner alone, at
    the first start): Label Studio keeps the URL, and its webhook's, so a restart must not change it."""
    from st_contrastive.active.labelling_app import new_token

    if command.token:
        return command.token
    if os.environ.get(TOKEN_VARIABLE):
        return os.environ[TOKEN_VARIABLE]
    path = Path(command.run_dir) / TOKEN_FILE
    saved = path.read_text(encoding="utf-8").strip() if path.is_file() else ""
    if saved:
        return saved
    token = new_token()
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as f:
        f.write(token + "\n")
        f.flush()
        os.fsync(f.fileno())
    return token


def main(argv: list[str] | None = None) -> None:
    command = options.config_from_args(LabelStudioBackendConfig, build_parser().parse_args(argv))
    check_inputs(command)
    from st_contrastive.active.label_studio_backend import LABEL_STUDIO_ENVIRONMENT, LabelStudioBackend, create_app
    from st_contrastive.active.labelling import LabellingSession
    from st_contrastive.commands.label import addresses, bind
    from st_contrastive.extras import require_extra

    uvicorn = require_extra("uvicorn", "active")
    sock = bind(command.host, command.port)
    session = LabellingSession(command.run_dir, "label-studio", command.rounds)
    backend = LabelStudioBackend(session)
    token = access_token(command)
    name, hosts = addresses(command.host)
    hosts |= {host.lower() for host in command.allow_host}
    shown = f"[{name}]" if ":" in name else name
    url = f"http://{shown}:{sock.getsockname()[1]}/{token}"
    environment = " ".join(f"{name}={value}" for name, value in LABEL_STUDIO_ENVIRONMENT.items())
    print(
        f"SCALe backend for {command.run_dir}: start Label Studio with {environment}; in the project, Settings > "
        f"Annotation > Prelabeling: this model, and Settings > Model > Connect Model, URL {url}  (Ctrl-C stops; "
        "each label is saved as it comes)",
        flush=True,
    )
    app = create_app(backend, token, hosts)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


if __name__ == "__main__":
    main()
