"""``evaljig-fixtures`` answers an unusable output with one line and exit 2, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaljig_fixtures._cli import main
from testkit.cli import run_with_full_stdout

BUILDERS_MODULE = """
from evaljig_fixtures import Builder, write_output

BUILDERS = [Builder(name="note", outputs=("note.txt",), build=lambda out, ctx: [write_output(out, "note.txt", b"n")])]
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project registering one builder in its pyproject.toml, as the working folder."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text('[tool.evaljig]\nbuilders = ["hostile_builders:BUILDERS"]\n')
    (root / "hostile_builders.py").write_text(BUILDERS_MODULE)
    monkeypatch.chdir(root)
    return root


@pytest.mark.usefixtures("project")
def test_stdout_to_dev_full_is_one_line_exit_2() -> None:
    proc = run_with_full_stdout("evaljig_fixtures", "regen", "--list")
    assert proc.returncode == 2
    assert proc.stderr == "evaljig-fixtures: output: No space left on device\n"


@pytest.mark.usefixtures("project")
def test_regen_out_under_a_file_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("x")
    out = tmp_path / "file" / "fixtures"
    assert main(["regen", "--only", "note", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"evaljig-fixtures: {out}")
    assert err.endswith(": Not a directory\n")
