"""One exclusive lock across processes: the cassette recorders of one folder, the merges into one report.

An advisory ``flock`` on a folder (opened read-only) or on a lock file (created when missing):
released when the descriptor closes, so a killed holder never leaves it taken. Windows has no
``flock``: there the lock is a no-op, and concurrent writers of one target are unsupported.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (a folder, or a lock file created when missing) while in the block."""
    if sys.platform == "win32":  # pragma: no cover - no flock
        yield
        return
    import fcntl

    flags = os.O_RDONLY if path.is_dir() else os.O_RDWR | os.O_CREAT
    fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock
