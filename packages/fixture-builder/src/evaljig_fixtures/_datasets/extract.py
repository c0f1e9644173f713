"""Write a package's members below a folder without ever following a symlink out of it.

The destination may hold anything already (a previous run, or a symlink planted by someone
else): each member's folders are opened one at a time relative to the folder above them with
``O_NOFOLLOW``, and the file is created and renamed into place relative to that open folder,
so a symlink swapped in between a check and a write cannot redirect it either. The
destination folder itself may be a symlink: it is the caller's choice. Each file is written
atomically, like ``evaljig_common.write_bytes_atomic``: a hidden temporary sibling renamed
over the target.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path

from evaljig_common import TMP_SUFFIX

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC
_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | _CLOEXEC
_NAME_KEEP = 200


class UnsafeDestinationError(OSError):
    """A folder on a member's path is a symlink or not a folder: nothing is written through it."""


def write_below(root: Path, parts: Sequence[str], data: bytes) -> Path:
    """Write ``data`` to ``root/parts...`` creating folders, following no symlink below ``root``."""
    fd = os.open(root, _DIR_FLAGS)
    try:
        for depth, part in enumerate(parts[:-1], start=1):
            child = _open_folder(fd, part, root.joinpath(*parts[:depth]))
            os.close(fd)
            fd = child
        _write_atomic_at(fd, parts[-1], data)
    finally:
        os.close(fd)
    return root.joinpath(*parts)


def _open_folder(parent_fd: int, name: str, shown: Path) -> int:
    with suppress(FileExistsError):
        os.mkdir(name, dir_fd=parent_fd)
    try:
        return os.open(name, _DIR_FLAGS | getattr(os, "O_NOFOLLOW", 0), dir_fd=parent_fd)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        mode = os.stat(name, dir_fd=parent_fd, follow_symlinks=False).st_mode
        what = "a symbolic link" if stat.S_ISLNK(mode) else "not a folder"
        raise UnsafeDestinationError(exc.errno, f"{shown} is {what}: not written through", str(shown)) from None


def _write_atomic_at(dir_fd: int, name: str, data: bytes) -> None:
    tmp = f".{name[:_NAME_KEEP]}.{os.getpid()}.{secrets.token_hex(4)}{TMP_SUFFIX}"
    fd = os.open(tmp, _FILE_FLAGS, 0o666, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
