"""`st-contrastive label RUN_DIR` as a person meets it: a server process of its own, labelled over HTTP."""

import signal
import socket
import subprocess
import sys
import time

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """The labelling server of ``run_dir`` on a free port, ready once its status answers; ``gold`` maps a text to
    the label a person gives it."""

    def __init__(self, run_dir: str, gold: dict[str, str]) -> None:
        self.run_dir, self.gold, self.port = run_dir, gold, free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.start()

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "st_contrastive.commands.cli",
                "label",
                self.run_dir,
                "--port",
                str(self.port),
                "--annotator",
                "ana",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.process.stdout.read()
            try:
                if httpx.get(self.url + "api/status", timeout=5).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.2)
        raise AssertionError("the labelling server did not answer in 120 s")

    def status(self) -> dict:
        return httpx.get(self.url + "api/status", timeout=30).json()

    def label_current(self) -> dict:
        status = self.status()
        item = status["item"]
        response = httpx.post(
            self.url + "api/label",
            timeout=30,
            json={"round": status["round"], "id": item["id"], "label": self.gold[item["text"]]},
        )
        assert response.status_code == 200, response.text
        return item

    def label_round(self, timeout: float = 300) -> dict:
        """Label every query of the round, then wait while the next one trains; the status after it."""
        while self.status()["item"] is not None:
            self.label_current()
        deadline = time.monotonic() + timeout
        while (status := self.status())["phase"] == "training":
            assert time.monotonic() < deadline, f"the next round did not come in {timeout} s"
            time.sleep(0.2)
        return status

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.process.stdout.close()
