"""``regen`` trusts nothing on disk: a symlink is never written through, and ``--check`` reports it as drift.

A fixtures folder is regular, non-executable files in real folders. A symlink at or below it
(out of the repository, or to identical bytes), a FIFO or an executable bit is drift for
``--check`` (listed, exit 1, never a traceback) and a one-line refusal for a rebuild, before any
builder runs and before anything outside the folder could be touched.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from evaljig_fixtures import BuildContext, Builder, regen_main, write_output

A = b"a fixture\n"
DATA = b"\x00binary dataset\n"


def _build_a(out_dir: Path, ctx: BuildContext) -> list[Path]:
    return [write_output(out_dir, "a.txt", A)]


def _build_data(out_dir: Path, ctx: BuildContext) -> list[Path]:
    return [write_output(out_dir, "datasets/x.bin", DATA)]


BUILDERS = [Builder("a", ("a.txt",), _build_a), Builder("data", ("datasets/",), _build_data)]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    fixtures = tmp_path / "repo" / "fixtures"
    assert regen_main(BUILDERS, [], fixtures=fixtures) == 0
    return fixtures


def regen(fixtures: Path, *argv: str) -> int:
    return regen_main(BUILDERS, list(argv), fixtures=fixtures)


def test_regen_refuses_to_write_through_a_symlinked_subfolder_out_of_the_repository(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.bin").write_bytes(b"someone else's file\n")
    for path in (repo / "datasets").iterdir():
        path.unlink()
    (repo / "datasets").rmdir()
    (repo / "datasets").symlink_to(outside, target_is_directory=True)
    capsys.readouterr()

    assert regen(repo) == 2

    assert (outside / "x.bin").read_bytes() == b"someone else's file\n"  # not written through
    assert (repo / "datasets").is_symlink()
    assert not (repo.parent / ".fixtures.regen").exists()
    captured = capsys.readouterr()
    assert captured.out == ""  # refused before any builder ran
    assert captured.err == (
        f"evaljig-fixtures regen: refused: {repo / 'datasets'} is a symlink to {outside}: regen never writes "
        "through a symlink or into a special file; fix: replace it with a real folder or file (or delete it) "
        "and rerun\n"
    )


def test_check_reports_a_symlinked_subfolder_as_drift_not_a_traceback(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside"
    (repo / "datasets").rename(outside)  # identical bytes, out of the repository
    (repo / "datasets").symlink_to(outside, target_is_directory=True)
    capsys.readouterr()

    assert regen(repo, "--check") == 1

    out = capsys.readouterr().out
    assert f"symlink  datasets  (is a symlink to {outside}; a fixture is a regular, non-executable file)" in out
    assert (
        f"symlink  datasets/x.bin  (its folder datasets is a symlink to {outside}; "
        "a fixture is a regular, non-executable file)"
    ) in out
    assert "regen --check: 2 drifted file(s)" in out


def test_check_reports_a_file_that_became_a_symlink_to_identical_content(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    twin = tmp_path / "twin.txt"
    twin.write_bytes(A)
    (repo / "a.txt").unlink()
    (repo / "a.txt").symlink_to(twin)
    capsys.readouterr()

    assert regen(repo, "--check") == 1
    assert f"symlink  a.txt  (is a symlink to {twin}; a fixture is a regular, non-executable file)" in (
        capsys.readouterr().out
    )
    assert regen(repo) == 2  # and a rebuild refuses it rather than replace or follow it
    assert (repo / "a.txt").is_symlink()


def test_an_executable_bit_is_drift_and_a_rebuild_clears_it(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = repo / "datasets" / "x.bin"
    target.chmod(target.stat().st_mode | stat.S_IXUSR)
    capsys.readouterr()

    assert regen(repo, "--check") == 1
    out = capsys.readouterr().out
    assert "mode     datasets/x.bin  (is executable (a fixture never is); a fixture is a regular" in out
    assert "1 drifted file(s)" in out

    assert regen(repo) == 0
    assert not target.stat().st_mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    assert target.read_bytes() == DATA
    assert regen(repo, "--check") == 0


def test_a_fifo_among_the_fixtures_is_drift_and_never_opened(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "a.txt").unlink()
    os.mkfifo(repo / "a.txt")  # opening it for reading would block forever
    capsys.readouterr()

    assert regen(repo, "--check") == 1
    assert "special  a.txt  (is not a regular file (a FIFO); a fixture is a regular" in capsys.readouterr().out
    assert regen(repo) == 2
    assert "a.txt is not a regular file (a FIFO): regen never writes" in capsys.readouterr().err


def test_the_fixtures_folder_itself_may_not_be_a_symlink(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "linked-fixtures"
    link.symlink_to(repo, target_is_directory=True)
    capsys.readouterr()
    assert regen(link) == 2
    assert capsys.readouterr().err.startswith(f"evaljig-fixtures regen: refused: {link} is a symlink to {repo}: ")
    assert regen(link, "--check") == 1
    assert capsys.readouterr().out == (
        f"regen --check: drift: {link} is a symlink to {repo} (a fixtures folder is a real folder; regen never "
        "writes through a symlink)\n"
    )


def test_a_symlink_among_a_skipped_builders_files_is_still_drift(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    twin = tmp_path / "twin.txt"
    twin.write_bytes(A)
    (repo / "a.txt").unlink()
    (repo / "a.txt").symlink_to(twin)
    capsys.readouterr()
    assert regen(repo, "--check", "--only", "data") == 1  # builder a is not run: its file is not compared...
    out = capsys.readouterr().out
    assert f"symlink  a.txt  (is a symlink to {twin}; a fixture is a regular, non-executable file)" in out  # ...yet
