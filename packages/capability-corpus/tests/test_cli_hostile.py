"""``evaljig-corpus`` answers an unusable output with one line and exit 2, never a traceback."""

from __future__ import annotations

from testkit.cli import run_with_full_stdout


def test_stdout_to_dev_full_is_one_line_exit_2() -> None:
    proc = run_with_full_stdout("evaljig_corpus", "list")
    assert proc.returncode == 2
    assert proc.stderr == "evaljig-corpus: output: No space left on device\n"
