"""`st-contrastive ...` with one fault injected into the real active-learning loop, to test what a person sees when a
server dies or a round fails at a given phase:

    python tests/fault_injection.py pause-evaluating MARKER -- label RUN --port 0
    python tests/fault_injection.py fail-training-once MARKER -- label RUN --port 0

``pause-PHASE`` (training, evaluating, acquiring): the first time the round reaches that phase, MARKER is written and
the process waits there for its kill. ``fail-training-once``: the first round trained raises, as an out-of-memory
error would, and MARKER is written; the retry trains for real. Everything else is the real command."""

import sys
import threading
from pathlib import Path

from st_contrastive.active import loop
from st_contrastive.commands.cli import main
from st_contrastive.scale import round_training as objectives

PHASES = {"training": (objectives, "train_round"), "evaluating": (loop, "_evaluate"), "acquiring": (loop, "acquire")}


def inject(fault: str, marker: Path) -> None:
    action, _, phase = fault.partition("-")
    phase = phase.removesuffix("-once")
    module, name = PHASES[phase]
    real, seen = getattr(module, name), []

    def faulty(*args, **kwargs):
        if not seen:
            seen.append(1)
            marker.write_text(phase)
            if action == "pause":
                threading.Event().wait()  # until SIGKILL
            raise RuntimeError("CUDA out of memory (injected by tests/fault_injection.py)")
        return real(*args, **kwargs)

    setattr(module, name, faulty)


if __name__ == "__main__":
    fault, marker, separator, *argv = sys.argv[1:]
    assert separator == "--", __doc__
    inject(fault, Path(marker))
    main(argv)
