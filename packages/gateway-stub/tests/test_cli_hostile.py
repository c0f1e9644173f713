"""``evaljig-gateway`` answers an unusable stdout with one line and exit 2, never a traceback."""

from __future__ import annotations

import pytest

from testkit.cli import run_with_full_stdout


@pytest.mark.parametrize("command", [["behaviours"], ["serve", "--port", "0"]])
def test_stdout_to_dev_full_is_one_line_exit_2(command: list[str]) -> None:
    proc = run_with_full_stdout("evaljig_gateway", *command)
    assert proc.returncode == 2
    assert proc.stderr == "evaljig-gateway: output: No space left on device\n"
