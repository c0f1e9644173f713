"""Atomic file writes: readers (and a merge running mid-session) never see half a file.

Every file the reporter writes goes through a temporary sibling and ``os.replace``. No
fsync: this protects against crashes of the writing process and concurrent readers, not
against power loss, and keeps a per-case write in the tens of microseconds.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

#: Temporary files end with this suffix; a merge reports leftovers as partial writes.
TMP_SUFFIX = ".tmp"


def tmp_path_for(path: Path) -> Path:
    """A per-process hidden sibling, so concurrent writers of one path never share a temp file."""
    return path.with_name(f".{path.name}.{os.getpid()}{TMP_SUFFIX}")


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    tmp = tmp_path_for(path)
    try:
        with tmp.open("wb") as fh:
            fh.write(data)
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    write_bytes_atomic(path, text.encode("utf-8"))


@contextmanager
def open_atomic(path: Path, mode: str = "w") -> Iterator[IO[str]]:
    """Stream text into ``path``; it appears only if the block finishes without an exception."""
    tmp = tmp_path_for(path)
    try:
        with tmp.open(mode, encoding="utf-8", newline="\n") as fh:
            yield fh
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextmanager
def open_atomic_binary(path: Path) -> Iterator[IO[bytes]]:
    """Stream bytes into ``path``; it appears only if the block finishes without an exception."""
    tmp = tmp_path_for(path)
    try:
        with tmp.open("wb") as fh:
            yield fh
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
