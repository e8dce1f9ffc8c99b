"""Label Studio as the slow test and the docs' screenshots meet it: the real server (tests/label_studio/
requirements.lock, in .venv-label-studio) as a process of its own on a free port, with a fresh SQLite data folder, an
admin and an API token preset, offline; label-studio-sdk steps run in that venv (tests/label_studio/sdk_steps.py);
and the SCALe backend, `st-contrastive label-studio-backend RUN`, as another process."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from labelling_server import free_port

from st_contrastive.active.label_studio_backend import LABEL_STUDIO_ENVIRONMENT

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv-label-studio"
SDK_STEPS = Path(__file__).with_name("label_studio") / "sdk_steps.py"

# Label Studio's settings (environment variables) for a backend on this machine, offline. Found in 1.23.2's source
# and checked on the running server:
SETTINGS = LABEL_STUDIO_ENVIRONMENT | {  # what the backend prints (a model on 127.0.0.1, its scores), then:
    # No error reports sent anywhere; and with sentry-sdk 3 (the lock's; label-studio asks for >=2.16) Label Studio
    # 1.23.2 stops at start ("Unknown option 'send_default_pii'") unless the DSN is empty.
    "SENTRY_DSN": "",
    "FRONTEND_SENTRY_DSN": "",
    "LATEST_VERSION_CHECK": "false",
    "COLLECT_ANALYTICS": "false",
}


def wait_until(condition, timeout: float, what: str, every: float = 0.2):
    """``condition()``'s first truthy value, checked every ``every`` seconds; an AssertionError naming ``what``
    after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"{what}: not within {timeout:.0f} s"
        time.sleep(every)


def log_tail(path: Path, lines: int = 40) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else "(no log)"


class LabelStudio:
    """Label Studio serving ``folder/data`` (SQLite) on 127.0.0.1 and a free port, its log in ``folder/
    label-studio.log``. ``email``/``password`` log in to the page; ``token`` is the admin's API token (a legacy
    token, as ``--user-token`` sets it). :meth:`wait` returns once the API answers with that token."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.email, self.password, self.token = "ana@example.com", secrets.token_urlsafe(12), secrets.token_hex(20)
        self.log = self.folder / "label-studio.log"
        executable = VENV / "bin" / "label-studio"
        assert executable.exists(), f"no Label Studio at {executable}: make label-studio-venv"
        # A clean environment: Label Studio reads USERNAME, PASSWORD, HOST and the like from it.
        environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.folder), **SETTINGS}
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                [
                    *(str(executable), "start", "--no-browser", "--log-level", "WARNING"),
                    *(
                        "--internal-host",
                        "127.0.0.1",
                        "--port",
                        str(self.port),
                        "--data-dir",
                        str(self.folder / "data"),
                    ),
                    *("--username", self.email, "--password", self.password, "--user-token", self.token),
                    "--enable-legacy-api-token",  # the admin's token as --user-token sets it (else a JWT is needed)
                ],
                env=environment,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.folder,
            )

    def wait(self, timeout: float = 300) -> None:
        """Until the API answers as the preset admin (a fresh data folder first runs every migration: ~40 s)."""

        def answers() -> bool:
            assert self.process.poll() is None, f"Label Studio exited {self.process.returncode}:\n{log_tail(self.log)}"
            # Label Studio moves to the next port when its own is taken: that one would never answer.
            assert "is in use" not in self.log.read_text(errors="replace"), log_tail(self.log)
            try:
                response = httpx.get(
                    f"{self.url}/api/current-user/whoami", headers={"Authorization": f"Token {self.token}"}, timeout=5
                )
            except httpx.TransportError:
                return False
            return response.status_code == 200 and response.json()["email"] == self.email

        wait_until(answers, timeout, f"Label Studio at {self.url}", every=0.5)

    def sdk(self, step: str, **arguments) -> dict | list:
        """A step of tests/label_studio/sdk_steps.py (label-studio-sdk, in Label Studio's venv): its JSON answer."""
        environment = {**os.environ, "LABEL_STUDIO_URL": self.url, "LABEL_STUDIO_API_KEY": self.token}
        done = subprocess.run(
            [str(VENV / "bin" / "python"), str(SDK_STEPS), step, json.dumps(arguments)],
            env=environment,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, f"sdk step {step} {arguments} failed:\n{done.stderr[-4000:]}"
        return json.loads(done.stdout)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Backend:
    """`st-contrastive label-studio-backend RUN_DIR` on a port of its own, kept across restarts (the URL Label Studio
    holds names it, and the token the run folder keeps); rounds train at their last label (no grace period), with no
    cross-validated estimate; ``options`` are more of its options. ``url`` is the URL it printed, token included.
    With ``fault``, the command runs under tests/fault_injection.py (``pause-training``: it writes ``marker`` and
    waits for its kill in the first round it trains)."""

    def __init__(self, run_dir: str, log: Path, options: tuple[str, ...] = ()) -> None:
        self.run_dir, self.log, self.options, self.port = run_dir, Path(log), list(options), free_port()
        self.process: subprocess.Popen | None = None

    def start(self, fault: str | None = None, marker: Path | None = None, timeout: float = 300) -> str:
        command = [sys.executable, "-m", "st_contrastive.commands.cli"]
        if fault:
            command = [sys.executable, str(Path(__file__).with_name("fault_injection.py")), fault, str(marker), "--"]
        arguments = ["label-studio-backend", self.run_dir, *self.options, "--port", str(self.port)]
        arguments += ["--grace-seconds", "0", "--estimate-folds", "0"]
        with self.log.open("a") as log:
            log.write(f"--- {' '.join(arguments)} (fault: {fault})\n")
            log.flush()
            start = log.tell()
            self.process = subprocess.Popen([*command, *arguments], stdout=log, stderr=subprocess.STDOUT)

        def printed_url() -> str | None:
            assert self.process.poll() is None, f"the backend exited {self.process.returncode}:\n{log_tail(self.log)}"
            with self.log.open(errors="replace") as f:
                f.seek(start)
                line = next((line for line in f if " URL http" in line), None)
            return line.split(" URL ", 1)[1].split()[0] if line else None

        self.url = wait_until(printed_url, timeout, "the backend's URL")
        wait_until(self.answers, timeout, f"the backend at {self.url}")
        return self.url

    def answers(self) -> bool:
        try:
            return httpx.get(f"{self.url}/health", timeout=5).status_code == 200
        except httpx.TransportError:
            return False

    def health(self) -> dict:
        return httpx.get(f"{self.url}/health", timeout=30).json()

    def kill(self) -> None:
        """SIGKILL: no handler runs, nothing is flushed on the way out."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
