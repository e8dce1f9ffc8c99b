"""``st-contrastive label RUN_DIR``: label an active-learning run in the browser, one text at a time.

    st-contrastive active --dataset my_texts.csv --label-names billing bug question --oracle human --output runs/mine
    st-contrastive label runs/mine            # then open the URL it prints, with its access token

The page shows each queried text with the current model's guess, label buttons (keys 1-9), ignore (i), undo of your
own last label (u) and skip (s), and a review list where any label given so far can be corrected. Each label is
written to the round's queries file at once; when the round is labelled (and its grace period is over, or "train
now" is pressed), the next one trains in the background (the same round as `st-contrastive active
--resume-from-checkpoint`) and its queries appear. At the budget the page shows the model's predictions for every
row (predictions.csv) and offers every label as a CSV. The queries file stays the record: a spreadsheet and `active
--resume-from-checkpoint` work on the same run.
"""

from __future__ import annotations

import argparse
import socket
from dataclasses import dataclass, field

from st_contrastive.active.labelling_settings import LabellingSettings
from st_contrastive.commands import options
from st_contrastive.commands import shared_options as shared
from st_contrastive.commands.options import option


@dataclass
class LabelConfig:
    """``st-contrastive label``'s options, each field the option of the same name."""

    run_dir: str = shared.human_run()
    host: str = shared.serving_host("for other people")
    port: int = option(8000, help="port to serve on (0: a free one, printed)")
    annotator: str | None = option(
        None,
        help="who labels, recorded with each label (default: the login name); with another --host than this "
        "machine's, the page asks each person for a name",
    )
    ssl_certfile: str | None = option(None, help="serve over HTTPS with this certificate (PEM), with --ssl-keyfile")
    ssl_keyfile: str | None = option(None, help="the certificate's private key (PEM)")
    page: LabellingSettings = field(default_factory=LabellingSettings)


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
    if not 0 <= command.port <= 65535:
        checks.add("--port", command.port, "must be in [0, 65535]")
    if (command.ssl_certfile is None) != (command.ssl_keyfile is None):
        checks.add("--ssl-certfile", command.ssl_certfile, "goes with --ssl-keyfile: give both, or neither for HTTP")
    checks.existing_file(command.ssl_certfile, "--ssl-certfile")
    checks.existing_file(command.ssl_keyfile, "--ssl-keyfile")
    checks.done()


WILDCARDS = ("0.0.0.0", "::")


def bind(host: str, port: int) -> socket.socket:
    """The server's socket, taken before the run loads: a port in use is one line, and nothing has trained."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        raise OSError(f"--port {port}: cannot serve on {host}:{port} ({error.strerror}); choose another port") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def addresses(host: str) -> tuple[str, frozenset[str]]:
    """The name to print in the URL, and every name a browser may reach this server by (its ``Host``)."""
    from st_contrastive.active.labelling_app import LOCAL_HOSTS

    if host not in WILDCARDS:
        return host, LOCAL_HOSTS | {host.lower()}
    name = socket.gethostname()
    names = {name, socket.getfqdn()}
    try:
        names |= set(socket.gethostbyname_ex(name)[2])
    except OSError:
        pass
    return name, LOCAL_HOSTS | {n.lower() for n in names}


def main(argv: list[str] | None = None) -> None:
    command = options.config_from_args(LabelConfig, build_parser().parse_args(argv))
    check_inputs(command)
    from st_contrastive.active.labelling import LabellingSession
    from st_contrastive.active.labelling_app import LOCAL_HOSTS, create_app, new_token
    from st_contrastive.extras import require_extra

    uvicorn = require_extra("uvicorn", "active")
    sock = bind(command.host, command.port)
    session = LabellingSession(command.run_dir, command.annotator, command.page)
    token, secure = new_token(), command.ssl_certfile is not None
    name, hosts = addresses(command.host)
    shown = f"[{name}]" if ":" in name else name
    url = f"{'https' if secure else 'http'}://{shown}:{sock.getsockname()[1]}/?token={token}"
    print(
        f"Labelling {command.run_dir} as {session.annotator}: open {url}  (Ctrl-C stops; the labels are saved as "
        "they are given)",
        flush=True,
    )
    # Served to other machines, several people may label: the page asks each for a name.
    ask_names = command.host not in LOCAL_HOSTS
    app = create_app(session, token, hosts, secure=secure, ask_names=ask_names)
    config = uvicorn.Config(
        app, log_level="warning", ssl_certfile=command.ssl_certfile, ssl_keyfile=command.ssl_keyfile
    )
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
