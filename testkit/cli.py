"""Run a package's command line with its stdout on a full device (``/dev/full``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def run_with_full_stdout(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m module args`` with stdout on ``/dev/full``; stderr captured as text."""
    with Path("/dev/full").open("w") as full:
        return subprocess.run(
            [sys.executable, "-m", module, *args],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
