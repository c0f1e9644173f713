"""``evaljig-gateway`` answers an unusable stdout with one line and exit 2, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("command", [["behaviours"], ["serve", "--port", "0"]])
def test_stdout_to_dev_full_is_one_line_exit_2(command: list[str]) -> None:
    with Path("/dev/full").open("w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "evaljig_gateway.cli", *command],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    assert proc.returncode == 2
    assert proc.stderr == "evaljig-gateway: output: No space left on device\n"
