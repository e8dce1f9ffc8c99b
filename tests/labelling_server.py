"""`st-contrastive label RUN_DIR` as a person meets it: a server process of its own, labelled over HTTP."""

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """The labelling server of ``run_dir`` on a free port, ready once its status answers; ``gold`` maps a text to
    the label a person gives it. ``page_url`` is the URL it printed (with its token), which a person opens; the API
    calls here carry the token and the page's own origin, as the page's do. ``grace_seconds``: the server's
    ``--grace-seconds`` (none by default: a round trains at its last label)."""

    def __init__(
        self, run_dir: str, gold: dict[str, str], grace_seconds: float = 0, fault: str | None = None, marker=None
    ) -> None:
        self.run_dir, self.gold, self.port, self.grace_seconds = run_dir, gold, free_port(), grace_seconds
        self.url = f"http://127.0.0.1:{self.port}/"
        self.start(fault, marker)

    def read_url(self) -> str:
        """The URL of the line the server prints once its port is taken (the token in it changes at each start)."""
        for line in self.process.stdout:
            if "open http" in line:
                return line.split("open ", 1)[1].split()[0]
        raise AssertionError("the labelling server printed no URL")

    def start(self, fault: str | None = None, marker: Path | None = None) -> None:
        """Start the server; with ``fault``, through tests/fault_injection.py (which writes ``marker`` when the fault
        is reached)."""
        command = [sys.executable, "-m", "st_contrastive.commands.cli"]
        if fault:
            command = [sys.executable, str(Path(__file__).with_name("fault_injection.py")), fault, str(marker), "--"]
        self.process = subprocess.Popen(
            [
                *command,
                "label",
                self.run_dir,
                "--port",
                str(self.port),
                "--annotator",
                "ana",
                "--grace-seconds",
                str(self.grace_seconds),
                "--estimate-folds",
                "0",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.page_url = self.read_url()
        token = self.page_url.split("token=", 1)[1]
        self.client = httpx.Client(headers={"X-Token": token, "Origin": self.url.rstrip("/")}, timeout=30)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.process.stdout.read()
            try:
                if self.client.get(self.url + "api/status", timeout=5).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.2)
        raise AssertionError("the labelling server did not answer in 120 s")

    def status(self) -> dict:
        return self.client.get(self.url + "api/status").json()

    def label_current(self) -> dict:
        status = self.status()
        item = status["item"]
        response = self.client.post(
            self.url + "api/label",
            json={"round": status["round"], "id": item["id"], "label": self.gold[item["text"]]},
        )
        assert response.status_code == 200, response.text
        return item

    def label_round(self, timeout: float = 300) -> dict:
        """Label every query of the round, then wait while the next one trains; the status after it."""
        while self.status()["item"] is not None:
            self.label_current()
        return self.after_training(timeout)

    def after_training(self, timeout: float = 300) -> dict:
        """The status once no round trains (at once when none does)."""
        deadline = time.monotonic() + timeout
        while (status := self.status())["phase"] == "training":
            assert time.monotonic() < deadline, f"the next round did not come in {timeout} s"
            time.sleep(0.2)
        return status

    def label_queue(self) -> dict:
        """Label every query of the round (the last label's answer says what the round does next)."""
        status = self.status()
        while status["item"] is not None:
            item = status["item"]
            label = {"round": status["round"], "id": item["id"], "label": self.gold[item["text"]]}
            response = self.client.post(self.url + "api/label", json=label)
            assert response.status_code == 200, response.text
            status = response.json()
        return status

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.process.stdout.close()
