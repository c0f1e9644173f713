"""Atomic writes: the old file or the new one, never half of one, and never a temporary file left behind."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from evaljig_common import (
    TMP_SUFFIX,
    open_atomic,
    open_atomic_binary,
    write_bytes_atomic,
    write_text_atomic,
)


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_write_replaces_the_file_and_returns_its_path(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old")
    assert write_text_atomic(target, "new ✓\r\n") == target
    assert target.read_bytes() == "new ✓\r\n".encode()  # line endings as given
    assert write_bytes_atomic(str(target), b"\x00\xff") == target  # a str path is accepted
    assert target.read_bytes() == b"\x00\xff"
    assert _names(tmp_path) == ["out.txt"]


def test_missing_parent_folders_are_created(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "c.json"
    write_text_atomic(target, "{}")
    assert target.read_text() == "{}"
    assert _names(target.parent) == ["c.json"]


@pytest.mark.parametrize("interrupt", [RuntimeError("boom"), KeyboardInterrupt()])
def test_an_exception_mid_write_keeps_the_old_file_and_no_temp(tmp_path: Path, interrupt: BaseException) -> None:
    target = tmp_path / "report.html"
    target.write_text("old")

    def write_half() -> None:
        with open_atomic(target) as handle:
            handle.write("half of the new")
            handle.flush()
            assert len(_names(tmp_path)) == 2, "the new text goes to a sibling, not the target"
            raise interrupt

    with pytest.raises(type(interrupt)):
        write_half()
    assert target.read_text() == "old"
    assert _names(tmp_path) == ["report.html"]


def test_an_exception_mid_binary_write_leaves_no_file(tmp_path: Path) -> None:
    target = tmp_path / "new.bin"

    def write_part() -> None:
        with open_atomic_binary(target) as handle:
            handle.write(b"partial")
            raise ValueError("stop")

    with pytest.raises(ValueError, match="stop"):
        write_part()
    assert _names(tmp_path) == []


def test_the_temporary_file_is_a_hidden_tmp_sibling(tmp_path: Path) -> None:
    """The reporter's merge lists hidden ``*.tmp`` files as partial writes: the names must keep that shape."""
    target = tmp_path / ("x" * 250)  # a long name still leaves room for the temporary one (NAME_MAX 255)
    with open_atomic_binary(target) as handle:
        (tmp,) = (p for p in tmp_path.iterdir() if p != target)
        assert tmp.name.startswith(".")
        assert tmp.name.endswith(TMP_SUFFIX)
        assert f".{os.getpid()}." in tmp.name
        handle.write(b"done")
    assert _names(tmp_path) == [target.name]


def test_a_target_that_is_a_folder_fails_and_leaves_no_temp(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    with pytest.raises(IsADirectoryError):
        write_text_atomic(tmp_path / "folder", "x")
    assert _names(tmp_path) == ["folder"]


def test_a_parent_that_is_a_file_fails_creating_the_parent(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(FileExistsError) as failed:
        write_text_atomic(tmp_path / "file" / "out.txt", "y")
    assert failed.value.filename == str(tmp_path / "file")
    assert _names(tmp_path) == ["file"]
    assert (tmp_path / "file").read_text() == "x"


def test_the_file_gets_ordinary_permissions(tmp_path: Path) -> None:
    """Like ``open(path, "w")``: 0o666 less the umask, not the 0o600 of a private temporary file."""
    old = os.umask(0o027)
    try:
        written = write_text_atomic(tmp_path / "a.txt", "x")
        with open_atomic(tmp_path / "b.txt") as handle:
            handle.write("y")
    finally:
        os.umask(old)
    assert stat.S_IMODE(written.stat().st_mode) == 0o640
    assert stat.S_IMODE((tmp_path / "b.txt").stat().st_mode) == 0o640


def test_text_is_utf8_with_unix_line_endings(tmp_path: Path) -> None:
    target = tmp_path / "summary.md"
    with open_atomic(target) as handle:
        handle.write("é\nz\n")
    assert target.read_bytes() == "é\nz\n".encode()


@pytest.mark.parametrize("mode", ["a", "r", "wb", "x"])
def test_open_atomic_writes_whole_text_files_only(tmp_path: Path, mode: str) -> None:
    with pytest.raises(ValueError, match=f"mode must be 'w' or 'wt', got '{mode}'"), open_atomic(tmp_path / "f", mode):
        pass
    assert _names(tmp_path) == []


def test_concurrent_writers_of_one_path_never_share_a_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "case.json"
    payloads = [bytes([n]) * 100_000 for n in range(8)]
    errors: list[BaseException] = []

    def write(data: bytes) -> None:
        try:
            for _ in range(20):
                write_bytes_atomic(target, data)
        except BaseException as exc:  # pragma: no cover - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(p,)) for p in payloads]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert target.read_bytes() in payloads  # one writer's whole file, never a mix
    assert _names(tmp_path) == ["case.json"]
