"""The command line builds every sub-command's help without importing torch, so --help is instant."""

import subprocess
import sys

from st_contrastive.cli import COMMANDS

CHECK = """
import sys
from st_contrastive.cli import main
for command in sys.argv[1:]:
    try:
        main([command, "--help"])
    except SystemExit:
        pass
heavy = sorted(m for m in ("torch", "sentence_transformers", "transformers", "datasets", "sklearn") if m in sys.modules)
print("HEAVY", heavy, file=sys.stderr)
"""


def test_every_help_builds_without_torch():
    done = subprocess.run([sys.executable, "-c", CHECK, *COMMANDS], capture_output=True, text=True, timeout=120, check=True)
    assert "HEAVY []" in done.stderr, done.stderr[-2000:]
    assert all(f"st-contrastive {name}" in done.stdout for name in COMMANDS), done.stdout[-2000:]
