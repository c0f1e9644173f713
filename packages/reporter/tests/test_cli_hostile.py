"""``evaljig-report`` answers an unusable output with one line and exit 2, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaljig_report._cli import main
from testkit.cli import run_with_full_stdout


def test_stdout_to_dev_full_is_one_line_exit_2(tmp_path: Path) -> None:
    proc = run_with_full_stdout("evaljig_report", "validate", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr == "evaljig-report: output: No space left on device\n"


@pytest.mark.parametrize("target", ["file/merged", "/proc/evaljig-merged"])
def test_merge_out_that_cannot_be_created_is_one_line_exit_2(
    tmp_path: Path, target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("x")
    (tmp_path / "reports").mkdir()
    out = tmp_path / target
    assert main(["merge", str(tmp_path / "reports"), "-o", str(out), "--no-step-summary"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"evaljig-report: {out}")
