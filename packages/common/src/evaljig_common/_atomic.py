"""Atomic file writes: readers (and a merge running mid-session) see the old file or the new one, never half.

Every write goes to a hidden temporary sibling, ``.<name>.<pid>.<random>.tmp``, that is renamed
over the target only once complete; on any exception, ``KeyboardInterrupt`` included, the
temporary file is removed and the target is left as it was. A temporary file found later was
left by a killed process: the reporter lists hidden ``*.tmp`` files as partial writes.

The file is created like any ``open(path, "w")``: mode ``0o666`` less the umask. Missing
parent folders are created first (a parent that is a file fails there, ``FileExistsError``).
No fsync: this protects against crashes of the writing process and against concurrent
readers, not against power loss, and keeps a small write in the tens of microseconds.
"""

from __future__ import annotations

import ctypes
import errno
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

#: Every temporary file's name ends with this (and starts with a dot).
TMP_SUFFIX = ".tmp"

StrPath = str | os.PathLike[str]

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
#: The target's name is cut to this in the temporary name, which stays within NAME_MAX (255).
_NAME_KEEP = 200
_ATTEMPTS = 100
_TEXT_MODES = {"w", "wt"}


def _create_sibling(path: Path) -> tuple[int, Path]:
    """A new, exclusively created hidden sibling of ``path``, and its open file descriptor."""
    path.parent.mkdir(parents=True, exist_ok=True)
    stem = f".{path.name[:_NAME_KEEP]}.{os.getpid()}."
    for _ in range(_ATTEMPTS):
        tmp = path.with_name(f"{stem}{secrets.token_hex(4)}{TMP_SUFFIX}")
        try:
            return os.open(tmp, _FLAGS, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"{path.parent}: no free temporary name for {path.name} after {_ATTEMPTS} tries")


@contextmanager
def open_atomic_binary(path: StrPath) -> Iterator[IO[bytes]]:
    """Stream bytes into ``path``; it appears (or is replaced) only if the block finishes without an exception."""
    target = Path(path)
    fd, tmp = _create_sibling(target)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
        tmp.replace(target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextmanager
def open_atomic(path: StrPath, mode: str = "w") -> Iterator[IO[str]]:
    """Stream UTF-8 text with ``\\n`` line endings into ``path``; it appears only if the block finishes.

    ``mode`` is ``"w"`` (or ``"wt"``): the file is always written whole, never appended to.
    """
    if mode not in _TEXT_MODES:
        raise ValueError(f"open_atomic writes a whole text file: mode must be 'w' or 'wt', got {mode!r}")
    target = Path(path)
    fd, tmp = _create_sibling(target)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            yield handle
        tmp.replace(target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_bytes_atomic(path: StrPath, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; returns ``path`` as a ``Path``."""
    target = Path(path)
    with open_atomic_binary(target) as handle:
        handle.write(data)
    return target


def write_text_atomic(path: StrPath, text: str) -> Path:
    """Write ``text`` as UTF-8 to ``path`` atomically, line endings as given; returns ``path`` as a ``Path``."""
    return write_bytes_atomic(path, text.encode("utf-8"))


#: ``renameat2``'s arguments: the working directory as the base of relative paths, and "swap the two".
_AT_FDCWD, _RENAME_EXCHANGE = -100, 2


def exchange_paths(first: Path, second: Path) -> bool:
    """Swap two paths in one atomic step (Linux ``renameat2``); False where the system cannot.

    What replaces a whole output folder at once (regen's fixtures, the reporter's merged report)
    uses it, with a two-rename fallback where it answers False.
    """
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is None:
        return False
    if renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    error = ctypes.get_errno()
    if error in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):  # kernel or filesystem without RENAME_EXCHANGE
        return False
    raise OSError(error, os.strerror(error), str(first), None, str(second))
